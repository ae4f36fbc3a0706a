"""Controlled tool execution: the ToolRunner and the executor's tool-skill branch."""

"""Installed code tools: a published package's WebAssembly tools, called from a chat turn and the MCP face."""

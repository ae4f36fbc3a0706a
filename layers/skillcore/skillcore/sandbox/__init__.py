"""Code tools: WebAssembly modules run under fuel, memory, time, output and host-call limits (docs/code-skills.md)."""

"""The publisher's tool: `python -m skillcore_pack keygen|init|build|sign|verify` (docs/packages.md).

Run from the repository root with the project's venv. It reads packages with the layer's own code
(skillcore/packages/), so what the tool accepts is what the server accepts; only key generation and signing
live here: Lambda verifies, it never signs.
"""

"""skillcore: the control plane for AI-companion agent skills."""

import os

# pydantic looks for third-party plugins through importlib.metadata the first time it builds a model:
# about 25 ms of every cold start, for plugins skillcore never installs.
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

VERSION = "0.1.0"

"""skillcore: the control plane for AI-companion agent skills."""

VERSION = "0.1.0"

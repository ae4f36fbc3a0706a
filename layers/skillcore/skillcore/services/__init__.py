"""Service functions: one use case each, collaborators passed in."""

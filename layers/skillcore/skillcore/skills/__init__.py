"""Skill manifests, definitions per kind, and the versioned registries that hold them."""

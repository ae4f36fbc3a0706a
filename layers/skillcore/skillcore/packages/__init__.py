"""Skill packages from outside the repository: the package format, signatures, publishers, release review and
the catalog (docs/packages.md)."""

"""Shared by every lane: the local stack's fixtures (tests/local_stack.py), requested only by the tests that
use them."""

pytest_plugins = ("tests.local_stack",)

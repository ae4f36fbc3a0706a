"""The unified executor of a chat turn."""

"""Agent memories: the item model, retrieval (memory-recall) and the prompt section (memory-context)."""

"""Agent memories: the item model, retrieval (the recall tool) and the ports the memory skills receive."""

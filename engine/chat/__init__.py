"""A group conversation: its settings, its rounds and events, the companions' memory, model routing."""

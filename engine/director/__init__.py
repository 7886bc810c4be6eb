"""The Director: who speaks next, and what it should do (policies and their prompts)."""

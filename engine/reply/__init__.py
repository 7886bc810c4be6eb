"""One companion turn: its prompt, the reply text rules, the copy guard, generation with one retry."""

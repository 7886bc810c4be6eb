"""Bundled training scripts (the ``train`` extra: torch, transformers, peft, trl).

Persona alignment (RLAIF), one module per stage, run by ``mascot-train`` (training/cli.py):
base_model -> sample -> prefs -> reward_model -> persona_rl -> export -> evaluate, each writing
where training/layout.py says. See docs/training.md.
"""

"""Maintenance scripts, outside the product; ``scripts.safety`` is the crisis screen's lab."""

"""Terminal front ends: the `mascot` command and the `mascot-bench` benchmark."""

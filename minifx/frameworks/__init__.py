"""One file per tensor library that minifx can trace: its answers to ``Framework``."""

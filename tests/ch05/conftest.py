"""Chapter 5 reuses chapter 4's twin models (tests/ch04/ch04_models.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "ch04"))

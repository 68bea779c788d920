"""Chapter 9 tests import the zoo of torch models that sits beside them."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

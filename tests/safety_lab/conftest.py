"""The crisis screen's lab tests: the labelled sets' bookkeeping and floors, and the lab scripts.
They import the lab (``scripts.safety``), which lives beside the product, not in it."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

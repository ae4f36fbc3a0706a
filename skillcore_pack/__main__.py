"""`python -m skillcore_pack ...`: see skillcore_pack/cli.py."""

import sys
from pathlib import Path

# The layer's code, when the tool runs outside `make` (which sets PYTHONPATH).
_LAYER = Path(__file__).resolve().parents[1] / "layers" / "skillcore"
if str(_LAYER) not in sys.path:
    sys.path.insert(0, str(_LAYER))

from skillcore_pack.cli import main  # noqa: E402

sys.exit(main())

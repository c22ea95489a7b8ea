"""`python bench/zoo`: run the model zoo (see `zoo.cli`)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as `python bench/zoo`, the package's own folder is first on the path: its
# modules must be imported as `zoo.*`, from the folder above.
if sys.path and Path(sys.path[0] or ".").resolve() == HERE:
    sys.path.pop(0)
sys.path.insert(0, str(HERE.parent))

from zoo.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

"""``python -m toolweave``: the same command line as ``toolweave``."""

import sys

from toolweave.cli import main

sys.exit(main())

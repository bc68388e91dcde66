#!/usr/bin/env bash
# Make sure Debian's Chromium is present for the browser tests.
# Already installed: returns at once. Missing and root: installs it with apt-get.
# Missing and not root: says so and exits 0 (the browser tests then skip themselves).
set -euo pipefail

CHROMIUM=/usr/bin/chromium
PACKAGES=(chromium fonts-dejavu-core)

if [ -x "$CHROMIUM" ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure_chromium: $CHROMIUM not found and not running as root; browser tests will be skipped." >&2
    echo "ensure_chromium: install it with: sudo apt-get install --no-install-recommends ${PACKAGES[*]}" >&2
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: $CHROMIUM not found and apt-get is unavailable; browser tests will be skipped." >&2
    exit 0
fi

echo "ensure_chromium: $CHROMIUM not found; installing Debian packages ${PACKAGES[*]} with apt-get"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2; do
    if apt-get update -q >"$log" 2>&1 &&
        apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >>"$log" 2>&1; then
        break
    fi
    if [ "$attempt" -eq 2 ]; then
        echo "ensure_chromium: apt-get failed; last lines of its output:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    echo "ensure_chromium: apt-get failed, retrying once" >&2
    sleep 5
done

if [ ! -x "$CHROMIUM" ]; then
    echo "ensure_chromium: packages installed but $CHROMIUM is still missing" >&2
    exit 1
fi
echo "ensure_chromium: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM installed")"

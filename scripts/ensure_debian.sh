#!/usr/bin/env bash
# Make sure a program from Debian's packages is present; the one place that installs them (ensure_chromium.sh,
# ensure_nginx.sh).
#   ensure_debian.sh NAME PROGRAM VERSION_FLAG WHEN_MISSING WHAT_MISSING_MEANS PACKAGE...
# Already installed: returns at once. Missing and root: installs the packages with apt-get (one retry).
# Missing and not root, or without apt-get: says so and how to install it, and exits WHEN_MISSING (0 where the
# tests that need it skip themselves, 1 where the target cannot go on).
set -euo pipefail

NAME=$1 PROGRAM=$2 VERSION_FLAG=$3 WHEN_MISSING=$4 MEANING=$5
shift 5
PACKAGES=("$@")

if [ -x "$PROGRAM" ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "$NAME: $PROGRAM not found and not running as root; $MEANING." >&2
    echo "$NAME: install it with: sudo apt-get install --no-install-recommends ${PACKAGES[*]}" >&2
    exit "$WHEN_MISSING"
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "$NAME: $PROGRAM not found and apt-get is unavailable; $MEANING." >&2
    exit "$WHEN_MISSING"
fi

echo "$NAME: $PROGRAM not found; installing Debian packages ${PACKAGES[*]} with apt-get"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2; do
    if apt-get update -q >"$log" 2>&1 &&
        apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >>"$log" 2>&1; then
        break
    fi
    if [ "$attempt" -eq 2 ]; then
        echo "$NAME: apt-get failed; last lines of its output:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    echo "$NAME: apt-get failed, retrying once" >&2
    sleep 5
done

if [ ! -x "$PROGRAM" ]; then
    echo "$NAME: packages installed but $PROGRAM is still missing" >&2
    exit 1
fi
echo "$NAME: $("$PROGRAM" "$VERSION_FLAG" 2>&1 | head -n 1 || echo "$PROGRAM installed")"

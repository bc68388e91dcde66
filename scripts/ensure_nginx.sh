#!/usr/bin/env bash
# Make sure Debian's nginx is present for make deploy-check (a real reverse proxy).
# Already installed: returns at once. Missing and root: installs it with apt-get.
# Missing and not root, or without apt-get: says how to install it and exits 1 (make deploy-check needs it).
set -euo pipefail

NGINX=/usr/sbin/nginx
PACKAGES=(nginx-light)

if [ -x "$NGINX" ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "ensure_nginx: $NGINX not found and not running as root; the deployment check cannot run." >&2
    echo "ensure_nginx: install it with: sudo apt-get install --no-install-recommends ${PACKAGES[*]}" >&2
    exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_nginx: $NGINX not found and apt-get is unavailable; the deployment check cannot run." >&2
    exit 1
fi

echo "ensure_nginx: $NGINX not found; installing Debian packages ${PACKAGES[*]} with apt-get"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2; do
    if apt-get update -q >"$log" 2>&1 &&
        apt-get install -y -q --no-install-recommends "${PACKAGES[@]}" >>"$log" 2>&1; then
        break
    fi
    if [ "$attempt" -eq 2 ]; then
        echo "ensure_nginx: apt-get failed; last lines of its output:" >&2
        tail -n 20 "$log" >&2
        exit 1
    fi
    echo "ensure_nginx: apt-get failed, retrying once" >&2
    sleep 5
done

if [ ! -x "$NGINX" ]; then
    echo "ensure_nginx: packages installed but $NGINX is still missing" >&2
    exit 1
fi
echo "ensure_nginx: $("$NGINX" -v 2>&1 || echo "$NGINX installed")"

#!/usr/bin/env bash
# Make sure Debian's Chromium is present for the browser tests; when it cannot be installed (not root, no
# apt-get) this exits 0 and the browser tests skip themselves.
exec bash "$(dirname "${BASH_SOURCE[0]}")/ensure_debian.sh" ensure_chromium /usr/bin/chromium --version 0 \
    "browser tests will be skipped" chromium fonts-dejavu-core

#!/usr/bin/env bash
# Make sure Debian's nginx is present for make deploy-check (a real reverse proxy); when it cannot be installed
# this exits 1, since the check needs it.
exec bash "$(dirname "${BASH_SOURCE[0]}")/ensure_debian.sh" ensure_nginx /usr/sbin/nginx -v 1 \
    "the deployment check cannot run" nginx-light

#!/usr/bin/env bash
# Installs what building and testing uploader needs on Debian 12, as root.
# Idempotent: when every package is already installed it does not touch apt
# (set FORCE_APT=1 to run apt-get update/install anyway). Quiet; errors are shown.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$here/env.sh"

packages=(
    libinotifytools0-dev libcurl4-openssl-dev libssl-dev media-types
    nginx-light apache2 curl inotify-tools iproute2 openssl python3 util-linux
    ca-certificates time
    dpkg-dev lintian systemd man-db adduser
)

log() { printf 'install-deps: %s\n' "$*" >&2; }

missing=()
for p in "${packages[@]}"; do
    status="$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)"
    [ "$status" = "installed" ] || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ] || [ "${FORCE_APT:-0}" = "1" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        log "error: must run as root to install: ${missing[*]}"
        exit 1
    fi
    log "installing: ${missing[*]:-${packages[*]}}"
    export DEBIAN_FRONTEND=noninteractive
    # Keep package scripts from starting services (nginx or apache2 would take port 80).
    policy=/usr/sbin/policy-rc.d
    own_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 0755 "$policy"
        own_policy=1
    fi
    cleanup_policy() { if [ "$own_policy" = 1 ]; then rm -f "$policy"; fi; }
    trap cleanup_policy EXIT
    apt_log="$(mktemp)"
    if ! apt-get update -qq >"$apt_log" 2>&1; then
        cat "$apt_log" >&2; rm -f "$apt_log"; log "error: apt-get update failed"; exit 1
    fi
    if ! apt-get install -y -qq --no-install-recommends "${packages[@]}" >"$apt_log" 2>&1; then
        cat "$apt_log" >&2; rm -f "$apt_log"; log "error: apt-get install failed"; exit 1
    fi
    rm -f "$apt_log"
fi

# Never leave the distribution's nginx or apache2 service running (port 80): the tests and
# the demo start their own instances with their own configs and pid files. Package scripts
# never start apache2 (policy-rc.d above); it is only kept disabled here.
service nginx stop >/dev/null 2>&1 || true
for unit in nginx apache2; do
    if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
        systemctl disable --now "$unit" >/dev/null 2>&1 || true
    fi
    update-rc.d "$unit" disable >/dev/null 2>&1 || true
done
if [ -s /run/nginx.pid ]; then
    pid="$(cat /run/nginx.pid)"
    if kill -0 "$pid" 2>/dev/null; then
        kill -QUIT "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f /run/nginx.pid
fi

# Python packages the tests use, each set installed only when python3 cannot import it yet:
# pip_ensure "MODULES TO IMPORT" PACKAGE...
pip_ensure() {
    local modules="$1"
    shift
    python3 -c "import $modules" >/dev/null 2>&1 && return 0
    log "installing python packages: $*"
    if ! python3 -m pip --version >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
    fi
    local pip_log
    pip_log="$(mktemp)"
    pip_install() {
        python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore "$@" >"$pip_log" 2>&1
    }
    # Debian's own python3 refuses pip installs unless told (PEP 668); a pyenv/venv python does not need it.
    if ! pip_install "$@" && ! pip_install --break-system-packages "$@"; then
        cat "$pip_log" >&2; rm -f "$pip_log"; log "error: pip install of $* failed"; exit 1
    fi
    rm -f "$pip_log"
}
# moto (an S3 store in server mode), boto3 to read objects back, botocore to sign requests
# independently of our SigV4, prometheus_client to parse the metrics file.
pip_ensure "moto.server, boto3, botocore, prometheus_client" botocore boto3 'moto[server]' prometheus_client
# tuspyserver (a tus 1.0 server, a FastAPI router) under uvicorn, for the tus tests.
pip_ensure "tuspyserver, uvicorn, fastapi" tuspyserver uvicorn fastapi

# The package (scripts/package-deb.sh) and its test: dpkg-dev (dpkg-shlibdeps, strip),
# lintian, systemd (systemd-analyze only: nothing is started), man-db (man pages).
for tool in nginx apache2 curl python3 ip sha256sum inotifywait dpkg-shlibdeps lintian systemd-analyze unshare man; do
    command -v "$tool" >/dev/null 2>&1 || { log "error: $tool not found after install"; exit 1; }
done
ensure_swift_on_path
swift --version >/dev/null 2>&1 || { log "error: swift is on PATH but does not run"; exit 1; }

#!/usr/bin/env bash
# Installs what building and testing uploader needs on Debian 12, as root.
# Idempotent: when every package is already installed it does not touch apt
# (set FORCE_APT=1 to run apt-get update/install anyway). Quiet; errors are shown.
#
# It leaves the machine's services and Python as they are: it never stops, disables or
# kills a service (the tests and the demo start nginx instances of their own, on ports
# of their own), and the Python packages the tests use go into a virtual environment in
# this checkout, .venv/ (ignored by git), never into the system's Python.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$here/env.sh"

packages=(
    libinotifytools0-dev libcurl4-openssl-dev libssl-dev media-types
    nginx-light apache2 curl inotify-tools iproute2 openssl python3 python3-venv util-linux
    ca-certificates time openssh-server openssh-client vsftpd
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
    # Keep package scripts from starting services this install adds (a fresh nginx would
    # take port 80), for the length of this apt-get only. A service already running is
    # not touched.
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
    # A web server this very run installed (not one the machine had) stays off at boot too:
    # the tests run instances of their own. One that was installed before is not touched.
    for server in nginx-light:nginx apache2:apache2 openssh-server:ssh vsftpd:vsftpd; do
        case " ${missing[*]} " in *" ${server%%:*} "*)
            if command -v systemctl >/dev/null 2>&1; then systemctl disable -q "${server##*:}" >/dev/null 2>&1 || true; fi
            update-rc.d "${server##*:}" disable >/dev/null 2>&1 || true ;;
        esac
    done
fi

# The Python packages the tests use, in a virtual environment of this checkout made from
# Debian's python3 (python3-venv): moto (an S3 store in server mode), boto3 to read objects
# back, botocore to sign requests independently of our SigV4, prometheus_client to parse the
# metrics file, tuspyserver (a tus 1.0 server, a FastAPI router) under uvicorn for the tus
# tests. Skipped when the environment already imports them all. The tests run these tools
# with .venv/bin/python3 (Tests/IntegrationTests/Support/TestPython.swift).
venv="$(repo_root)/.venv"
modules="moto.server, boto3, botocore, prometheus_client, tuspyserver, uvicorn, fastapi"
if ! "$venv/bin/python3" -c "import $modules" >/dev/null 2>&1; then
    log "installing python packages into ${venv}"
    venv_log="$(mktemp)"
    # --clear when it exists but its python does not run (the system's python3 changed).
    clear=()
    if [ -e "$venv" ] && ! "$venv/bin/python3" -c "" >/dev/null 2>&1; then clear=(--clear); fi
    if ! /usr/bin/python3 -m venv "${clear[@]}" "$venv" >"$venv_log" 2>&1 \
        || ! "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check \
            botocore boto3 'moto[server]' prometheus_client tuspyserver uvicorn fastapi >"$venv_log" 2>&1; then
        cat "$venv_log" >&2; rm -f "$venv_log"; log "error: making the virtual environment $venv failed"; exit 1
    fi
    rm -f "$venv_log"
    "$venv/bin/python3" -c "import $modules" || { log "error: $venv does not import: $modules"; exit 1; }
fi

# The package (scripts/package-deb.sh) and its test: dpkg-dev (dpkg-shlibdeps, strip),
# lintian, systemd (systemd-analyze only: nothing is started), man-db (man pages).
for tool in nginx apache2 curl python3 ip sha256sum inotifywait dpkg-shlibdeps lintian systemd-analyze unshare man; do
    command -v "$tool" >/dev/null 2>&1 || { log "error: $tool not found after install"; exit 1; }
done
ensure_swift_on_path
swift --version >/dev/null 2>&1 || { log "error: swift is on PATH but does not run"; exit 1; }

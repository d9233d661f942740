#!/usr/bin/env bash
# Runs the installed uploader.service for real, under systemd, with its whole sandbox:
# boots this machine's own systemd inside a throwaway container, starts the unit
# (Type=notify: `systemctl start` returns only after READY=1), uploads a file that waits
# offline until a network change (rtnetlink) wakes the daemon, lets a hook report what
# the sandbox allows (probe-hook), reloads (a broken config first, which must fail), stops,
# and prints what happened. The token reaches the daemon only as a systemd credential
# (LoadCredential=, in a runtime drop-in; the file itself is 0600 root:root), the photos
# outbox is given to the drop group (producers = uploader-drop), and a second profile's spool
# lies under /home: refused first (ProtectHome=tmpfs, the error names BindPaths=), then
# shown with BindPaths= in the drop-in.
#
# A manual check, not part of CI: it needs the package installed on this machine
# (apt-get install ./dist/uploader_*.deb), nginx, and systemd-nspawn (package
# systemd-container, or NSPAWN=/path/to/systemd-nspawn). The container sees / read-only
# with a fresh tmpfs on /var (--volatile=state), has a loopback network of its own, and
# is powered off when the script ends; its /home is a fresh tmpfs (--tmpfs=/home). Run as
# root: bash packaging/check/check-unit-in-container.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nspawn="${NSPAWN:-systemd-nspawn}"
port=8088                       # inside the container's own network namespace

die() { printf 'check-unit: error: %s\n' "$*" >&2; exit 1; }
step() { printf '\n==> %s\n' "$*"; }

# Everything below runs inside a mount namespace of its own, so the bind mounts vanish with it.
if [ -z "${CHECK_UNIT_INSIDE:-}" ]; then
    [ "$(id -u)" -eq 0 ] || die "run as root"
    dpkg-query -W -f='${db:Status-Status}' uploader 2>/dev/null | grep -qx installed \
        || die "the uploader package is not installed: apt-get install ./dist/uploader_*.deb"
    command -v "$nspawn" >/dev/null || die "no systemd-nspawn: install systemd-container or set NSPAWN"
    command -v nginx >/dev/null || die "no nginx: run scripts/install-deps.sh"
    CHECK_UNIT_INSIDE=1 exec unshare --mount --propagation private "$0" "$@"
fi

work="$(mktemp -d /tmp/uploader-unit-check-XXXXXX)"
mkdir -p "$work/root" "$work/etc" "$work/sink" "$work/nginx"
home_spool=/home/alice/drop
mount --bind / "$work/root"
mount -o remount,bind,ro "$work/root"

# The container's /etc/uploader: a config with one profile and the probe hook.
cat >"$work/etc/uploader.conf" <<EOF
[uploader]
log_level = debug
index = /var/lib/uploader/profiles.json
metrics_file = /var/spool/uploader/metrics/uploader.prom

[outbox photos]
spool = /var/spool/uploader/photos
url = http://127.0.0.1:$port/up/{path}
on_sent = /etc/uploader/probe-hook
producers = uploader-drop
auth = bearer
token_file = photos.token

[outbox homes]
spool = $home_spool
url = http://127.0.0.1:$port/home/{path}
EOF
install -m 0755 "$here/probe-hook" "$work/etc/probe-hook"
# Only root may read the token itself; the service gets systemd's copy.
printf 'from-a-credential\n' >"$work/etc/photos.token"
chmod 0600 "$work/etc/photos.token"
chgrp uploader "$work/etc/uploader.conf"
chmod 0640 "$work/etc/uploader.conf"
sed -e "s|@@LISTEN@@|127.0.0.1:$port|g" -e "s|@@ROOT@@|$work/sink|g" -e "s|@@RUN@@|$work/nginx|g" \
    "$here/../../Tests/Fixtures/nginx.conf.template" >"$work/nginx/nginx.conf"

"$nspawn" -D "$work/root" --volatile=state --private-network --register=no --keep-unit \
    --link-journal=no --bind-ro="$work/etc:/etc/uploader" --tmpfs=/home:mode=0755 -M uploader-check \
    -b --console=pipe -- systemd.unit=basic.target >"$work/boot.log" 2>&1 &
nspawn_pid=$!
cleanup() {
    [ -s "$work/nginx/nginx.pid" ] && kill "$(cat "$work/nginx/nginx.pid")" 2>/dev/null || true
    kill "$nspawn_pid" 2>/dev/null && wait "$nspawn_pid" 2>/dev/null || true
    umount "$work/root" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The container's PID 1: the systemd nspawn started.
leader=""
for _ in $(seq 100); do
    leader="$(pgrep -P "$nspawn_pid" -x systemd || true)"
    [ -n "$leader" ] && break
    sleep 0.1
done
[ -n "$leader" ] || { cat "$work/boot.log" >&2; die "the container's systemd did not start"; }
inside() { nsenter -t "$leader" -a "$@"; }
inside_net() { nsenter -t "$leader" -n "$@"; }
for _ in $(seq 300); do
    case "$(inside systemctl is-system-running 2>/dev/null || true)" in running|degraded) break ;; esac
    sleep 0.1
done
ms() { date +%s%3N; }

step "systemctl start uploader with a spool under /home and no BindPaths=: refused, exit 73"
inside install -d -o uploader -g uploader -m 0751 /var/spool/uploader
inside install -d -o uploader -g uploader -m 0750 /var/spool/uploader/metrics
inside install -d -o uploader -g uploader -m 0750 "$home_spool"
dropin=/run/systemd/system/uploader.service.d
inside mkdir -p "$dropin"
inside sh -c "printf '[Service]\nLoadCredential=photos.token:/etc/uploader/photos.token\n' >$dropin/credentials.conf"
inside systemctl daemon-reload
if inside systemctl start uploader; then die "the unit started with a spool under /home it cannot see"; fi
inside systemctl show uploader -p Result -p ExecMainStatus
inside journalctl -u uploader -o cat --no-pager | tail -8
inside journalctl -u uploader -p err -o cat --no-pager | grep "$home_spool"
inside systemctl reset-failed uploader

step "systemctl start uploader with BindPaths= and LoadCredential= in drop-ins (destination down)"
inside sh -c "printf '[Service]\nBindPaths=$home_spool\n' >$dropin/home-spool.conf"
inside systemctl daemon-reload
inside systemctl start uploader
inside systemctl show uploader -p ActiveState -p StatusText
echo "the photos outbox (producers = uploader-drop): $(inside stat -c '%a %U:%G' /var/spool/uploader/photos/outbox)"
echo "its spool: $(inside stat -c '%a %U:%G' /var/spool/uploader/photos); sent/: $(inside stat -c '%a %U:%G' /var/spool/uploader/photos/sent)"
echo "the profile index: $(inside stat -c '%a %U:%G %n' /var/lib/uploader/profiles.json)"
inside journalctl -u uploader -o cat --no-pager | grep "producers"

step "a file dropped while the destination is down"
head -c 300000 /dev/urandom >"$work/photo.jpg"
inside sh -c 'cat >/var/spool/uploader/photos/outbox/photo.jpg' <"$work/photo.jpg"
for _ in $(seq 100); do
    inside journalctl -u uploader -o cat | grep -q "destination unreachable" && break
    sleep 0.1
done
inside journalctl -u uploader -o cat | grep "destination unreachable"
echo "waiting 35 s, so that the daemon's probes back off to 16-30 s apart"
sleep 35

step "nginx up and one address added to lo: the daemon hears of it over rtnetlink"
inside_net nginx -p "$work/nginx/" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" &
for _ in $(seq 50); do inside_net curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
changed=$(ms)
inside_net ip addr add 127.0.0.2/8 dev lo
until inside test -e /var/spool/uploader/photos/sent/photo.jpg; do
    [ $(($(ms) - changed)) -lt 40000 ] || die "photo.jpg not sent within 40 s"
    sleep 0.05
done
echo "sent $(($(ms) - changed)) ms after the network change"
sha256sum "$work/photo.jpg" "$work/sink/up/photo.jpg"
cmp "$work/photo.jpg" "$work/sink/up/photo.jpg"
for _ in $(seq 100); do inside test -s /var/spool/uploader/photos/hook-report.txt && break; sleep 0.1; done

step "a file dropped into the spool under /home"
inside sh -c "printf 'from home\n' >$home_spool/outbox/home.txt"
until inside test -e "$home_spool/sent/home.txt"; do
    [ $(($(ms) - changed)) -lt 60000 ] || die "home.txt not sent within 60 s"
    sleep 0.05
done
cat "$work/sink/home/home.txt"

step "systemctl reload uploader with a broken config: fails, the running one stays"
cp "$work/etc/uploader.conf" "$work/uploader.conf.good"
printf 'concurency = 4\n' >>"$work/etc/uploader.conf"
if inside systemctl reload uploader; then die "systemctl reload succeeded with a broken config"; fi
inside journalctl -u uploader -p err -o cat --no-pager | grep 'concurency'
cat "$work/uploader.conf.good" >"$work/etc/uploader.conf"
inside systemctl is-active uploader

step "systemctl reload uploader, status"
inside systemctl reload uploader
sleep 1
inside systemctl status uploader --no-pager | sed -n 1,12p || true

step "what the hook could do inside the sandbox"
inside cat /var/spool/uploader/photos/hook-report.txt

step "systemctl stop uploader"
inside systemctl stop uploader
inside systemctl show uploader -p Result -p ExecMainStatus
step "the metrics file (metrics_file, written at exit)"
inside grep -E '^uploader_(files_total|destination_up)' /var/spool/uploader/metrics/uploader.prom
step "the daemon's log"
inside journalctl -u uploader -o cat --no-pager

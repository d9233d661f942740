#!/usr/bin/env bash
# The demo: nginx as a WebDAV PUT sink on 127.0.0.1:8080, `uploader run` on the
# sample uploader.conf, a few files dropped into the outbox (cp, echo >, mv), and a
# check that every one of them arrived intact. Exits non-zero if anything did not.
#
# Everything lives under demo/ in the repository (wiped at the start of each run).
# Environment: DEMO_TIMEOUT (seconds to wait for delivery, default 60),
# DEMO_CONFIGURATION (debug | release, default debug), UPLOADER_BIN (use this
# executable instead of building one).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=env.sh
. "$here/env.sh"
root="$(repo_root)"
cd "$root"

timeout_s="${DEMO_TIMEOUT:-60}"
configuration="${DEMO_CONFIGURATION:-debug}"
config="$root/uploader.conf"
demo="$root/demo"
spool="$demo/spool/demo"          # `spool =` in uploader.conf
sink="$demo/sink"                 # nginx root: url = .../uploads/{path}
received="$sink/uploads"
run="$demo/nginx"
src="$demo/src"
listen="127.0.0.1:8080"           # `url =` in uploader.conf

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'demo: error: %s\n' "$*" >&2; exit 1; }

# Polls "$@" until it succeeds or $1 seconds pass.
wait_for() {
    local seconds="$1"; shift
    local deadline=$((SECONDS + seconds))
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

step "installing dependencies"
bash scripts/install-deps.sh
ensure_swift_on_path

if [ -n "${UPLOADER_BIN:-}" ]; then
    bin="$UPLOADER_BIN"
else
    step "building uploader ($configuration)"
    swift build -c "$configuration" --product uploader
    bin="$(swift build -c "$configuration" --show-bin-path)/uploader"
fi
[ -x "$bin" ] || die "no uploader executable at $bin"

step "preparing demo/"
if curl -s -o /dev/null --max-time 1 "http://$listen/"; then
    die "something already answers on $listen; stop it first (uploader.conf sends there)"
fi
rm -rf "$demo"
mkdir -p "$sink" "$run" "$src"

nginx_pid=""
daemon_pid=""
cleanup() {
    local status=$?
    if [ -n "$daemon_pid" ] && kill -0 "$daemon_pid" 2>/dev/null; then
        kill -TERM "$daemon_pid" 2>/dev/null || true
        wait_for 35 eval '! kill -0 "$daemon_pid" 2>/dev/null' || kill -KILL "$daemon_pid" 2>/dev/null || true
    fi
    if [ -n "$nginx_pid" ] && kill -0 "$nginx_pid" 2>/dev/null; then
        kill -TERM "$nginx_pid" 2>/dev/null || true
        wait_for 10 eval '! kill -0 "$nginx_pid" 2>/dev/null' || kill -KILL "$nginx_pid" 2>/dev/null || true
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "starting nginx (WebDAV PUT sink) on $listen"
sed -e "s|@@LISTEN@@|$listen|g" -e "s|@@ROOT@@|$sink|g" -e "s|@@RUN@@|$run|g" \
    Tests/Fixtures/nginx.conf.template >"$run/nginx.conf"
nginx -p "$run/" -c "$run/nginx.conf" -e "$run/error.log" >"$run/stdout.log" 2>&1 &
nginx_pid=$!
nginx_up() {
    kill -0 "$nginx_pid" 2>/dev/null || { cat "$run/error.log" "$run/stdout.log" >&2; die "nginx exited"; }
    curl -s -o /dev/null --max-time 1 "http://$listen/"
}
wait_for 10 nginx_up || die "nginx did not answer on $listen within 10s: $(cat "$run/error.log")"
echo "nginx pid $nginx_pid, files land in ${sink#"$root"/}"

step "starting: uploader run --config uploader.conf"
"$bin" run --config "$config" >"$demo/uploader.log" 2>&1 &
daemon_pid=$!
daemon_alive() {
    kill -0 "$daemon_pid" 2>/dev/null && return 0
    wait "$daemon_pid" 2>/dev/null && code=0 || code=$?
    daemon_pid=""
    cat "$demo/uploader.log" >&2
    die "uploader exited early (status $code)"
}
outbox_ready() { daemon_alive && [ -d "$spool/outbox" ]; }
wait_for 15 outbox_ready || die "uploader did not create ${spool#"$root"/}/outbox within 15s"
echo "uploader pid $daemon_pid, watching ${spool#"$root"/}/outbox"

step "dropping files into the outbox"
head -c $((3 * 1024 * 1024)) /dev/urandom >"$src/photo.jpg"
head -c 300000 /dev/urandom >"$src/report.pdf"
printf 'hello from the uploader demo, %s\n' "$(date -u +%FT%TZ)" >"$src/hello.txt"
head -c 20000 /dev/urandom >"$src/holiday photo.jpg"
names=("photo.jpg" "hello.txt" "report.pdf" "holiday photo.jpg")

cp "$src/photo.jpg" "$spool/outbox/photo.jpg"                     # CREATE + CLOSE_WRITE
echo "$(cat "$src/hello.txt")" >"$spool/outbox/hello.txt"           # echo >
cp "$src/report.pdf" "$demo/report.pdf.staging"
mv "$demo/report.pdf.staging" "$spool/outbox/report.pdf"            # MOVED_TO
cp "$src/holiday photo.jpg" "$spool/outbox/holiday photo.jpg"       # a space: %20 in the URL
ls -l "$spool/outbox"

step "waiting up to ${timeout_s}s for every file to reach sent/"
all_sent() {
    daemon_alive
    local n
    for n in "${names[@]}"; do [ -f "$spool/sent/$n" ] || return 1; done
}
ok=1
if ! wait_for "$timeout_s" all_sent; then
    ok=0
    echo "demo: not everything reached sent/ within ${timeout_s}s" >&2
fi

step "the sink (${received#"$root"/})"
ls -l "$received" 2>/dev/null || echo "(nothing received)"
step "sent/ (${spool#"$root"/}/sent)"
ls -l "$spool/sent" 2>/dev/null || echo "(empty)"
if [ -d "$spool/retry" ] && [ -n "$(ls -A "$spool/retry")" ]; then
    step "retry/"
    ls -l "$spool/retry"
fi

step "sha256: dropped vs received"
for n in "${names[@]}"; do
    want="$(sha256sum <"$src/$n" | cut -d' ' -f1)"
    got="-"
    [ -f "$received/$n" ] && got="$(sha256sum <"$received/$n" | cut -d' ' -f1)"
    if [ "$want" = "$got" ]; then
        printf 'ok       %s  %s\n' "$want" "$n"
    else
        printf 'MISMATCH %s  %s (received: %s)\n' "$want" "$n" "$got"
        ok=0
    fi
done

step "uploader status --config uploader.conf"
"$bin" status --config "$config" || { echo "demo: uploader status failed" >&2; ok=0; }

step "stopping uploader (SIGTERM) and nginx"
kill -TERM "$daemon_pid"
if wait_for 35 eval '! kill -0 "$daemon_pid" 2>/dev/null'; then
    wait "$daemon_pid" && code=0 || code=$?
    echo "uploader exited with status $code"
    [ "$code" -eq 0 ] || ok=0
else
    echo "demo: uploader did not exit within 35s of SIGTERM" >&2
    ok=0
fi
daemon_pid=""
echo "uploader log: ${demo#"$root"/}/uploader.log (last lines below)"
tail -n 20 "$demo/uploader.log"

if [ "$ok" = 1 ]; then
    step "demo OK: ${#names[@]} files delivered intact"
else
    step "demo FAILED"
    exit 1
fi

#!/usr/bin/env bash
# The benchmark of issue #8, in one command (as root, on Debian 12):
#
#   bench/run.sh
#
# Installs what it needs, builds uploader as the package does, starts nginx as a WebDAV PUT
# sink on 127.0.0.1 (keep-alive on), makes the data sets on disk under bench/out/, and
# runs uploader and each peer tool on each data set BENCH_RUNS times, checking after
# every run that the sink received every file intact. Writes bench/RESULTS.md and
# bench/results.png (bench/report.py); raw results stay in bench/out/results.jsonl.
#
# Environment:
#   BENCH_RUNS=3        runs per tool and data set (the backlog row runs once per tool)
#   BENCH_BIG_RUNS=5    runs of the 1 GiB row (single runs vary by 2x here: more pairs)
#   BENCH_QUICK=1       small data sets, for developing the benchmark itself
#   BENCH_ONLY="small medium big latency backlog rate status"   rows to run (default: all); a
#                       partial run writes its report to bench/out/RESULTS.md, not bench/RESULTS.md
#   UPLOADER_BIN=PATH   use this executable instead of building one
#   BENCH_BEFORE=PATH   an earlier build of uploader, run beside this one in every row, run by
#                       run, as "<tool>-before" (the two take turns going first): a change to
#                       the core shows as a side-by-side ratio. Build it as this script builds
#                       its own, in a checkout of the earlier commit:
#                       bash scripts/package-deb.sh --build-only --scratch-path DIR (prints its path)
#   BENCH_NO_INSTALL=1  do not touch apt
#   BENCH_PEERS="..."   peer tools run in the small and medium rows (default: all five); "none"
#                       with BENCH_BEFORE gives a quick A/B of two builds, not a report to commit
#   BENCH_SINK=tmpfs    where nginx stores what it receives: tmpfs (default) stands in for a
#                       remote server; "disk" puts it on the spool's disk, where every fsync
#                       of ours (ext4, data=ordered) also flushes what nginx just wrote
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../scripts/env.sh
. "$here/../scripts/env.sh"
root="$(repo_root)"
cd "$root"

runs="${BENCH_RUNS:-3}"
before="${BENCH_BEFORE:-}"
quick="${BENCH_QUICK:-0}"
all_rows="small medium big latency backlog rate status"
only="${BENCH_ONLY:-$all_rows}"
if [ "$quick" = 1 ]; then
    small_n=300; medium_n=40; big_size=$((128 << 20)); backlog_n=5000; latency_n=20; rate_n=40; status_n=20000
else
    small_n=2000; medium_n=200; big_size=$((1 << 30)); backlog_n=100000; latency_n=50; rate_n=200; status_n=1000000
fi
rclone_backlog_seconds="${BENCH_RCLONE_BACKLOG_SECONDS:-45}"
big_runs="${BENCH_BIG_RUNS:-5}"
[ "$quick" = 1 ] && big_runs="${BENCH_BIG_RUNS:-$runs}"

out="$root/bench/out"
data="$out/data"
work="$out/work"
server="$out/server"            # the sink's filesystem: tmpfs unless BENCH_SINK=disk
sink="$server/root"
nginx_dir="$server/run"
results="$out/results.jsonl"
tool="$here/benchtool.py"
started_at="$(date -u +%FT%TZ)"

step() { printf '\n==> %s\n' "$*" >&2; }
note() { printf '    %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }
wants() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# ---------------------------------------------------------------------------------------
# Setup: packages, build, nginx

install_deps() {
    [ "${BENCH_NO_INSTALL:-0}" = 1 ] && return 0
    step "installing dependencies"
    bash scripts/install-deps.sh
    local extra=(nginx-light curl rclone inotify-tools time gnuplot-nox libnginx-mod-http-dav-ext python3 procps)
    local missing=() p
    for p in "${extra[@]}"; do
        [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] || missing+=("$p")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0
    [ "$(id -u)" -eq 0 ] || die "must run as root to install: ${missing[*]}"
    note "installing: ${missing[*]}"
    local policy=/usr/sbin/policy-rc.d own=0
    # Keep package scripts from starting the distribution's nginx on port 80 (one already
    # running is left alone: the bench's nginx listens on a port of its own).
    if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy"; chmod 0755 "$policy"; own=1; fi
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [ "$own" = 1 ] && rm -f "$policy"
    return 0
}

build() {
    ensure_swift_on_path
    if [ -n "${UPLOADER_BIN:-}" ]; then bin="$UPLOADER_BIN"; return; fi
    # What the Debian package ships: the Swift runtime linked in (scripts/package-deb.sh). Its
    # shared Swift libraries no longer mapped, a process starts about 6 MiB smaller.
    step "building uploader (release, as the package builds it)"
    mkdir -p "$out"
    bin="$(bash scripts/package-deb.sh --build-only --scratch-path "$root/.build/bench" 2>"$out/build.log" | tail -n 1)" \
        || { tail -n 20 "$out/build.log" >&2; die "the release build failed (bench/out/build.log)"; }
    [ -x "$bin" ] || die "no uploader executable at $bin"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

mounted_server=0
nginx_pid=""
start_nginx() {
    step "starting nginx (WebDAV PUT sink) on 127.0.0.1"
    mkdir -p "$server"
    if [ "${BENCH_SINK:-tmpfs}" = tmpfs ]; then
        mountpoint -q "$server" || { mount -t tmpfs -o size=4g,mode=0755 bench-sink "$server"; mounted_server=1; }
    fi
    mkdir -p "$nginx_dir" "$sink"
    port="$(free_port)"
    base="http://127.0.0.1:$port"
    # The test fixture, plus PROPFIND (dav-ext) because rclone's WebDAV backend needs it (when
    # the module is not installed, BENCH_NO_INSTALL=1, only runs without rclone work).
    local dav_ext=/usr/lib/nginx/modules/ngx_http_dav_ext_module.so ext=()
    [ -e "$dav_ext" ] && ext=(-e "1i load_module $dav_ext;" \
        -e 's|dav_methods PUT DELETE MKCOL;|dav_methods PUT DELETE MKCOL;\n            dav_ext_methods PROPFIND OPTIONS;|')
    sed -e "s|@@LISTEN@@|127.0.0.1:$port|g" -e "s|@@ROOT@@|$sink|g" -e "s|@@RUN@@|$nginx_dir|g" "${ext[@]}" \
        Tests/Fixtures/nginx.conf.template >"$nginx_dir/nginx.conf"
    : >"$nginx_dir/access.log"
    nginx -p "$nginx_dir/" -c "$nginx_dir/nginx.conf" -e "$nginx_dir/error.log" >"$nginx_dir/stdout.log" 2>&1 &
    nginx_pid=$!
    local i
    for i in $(seq 100); do
        curl -s -o /dev/null --max-time 1 "$base/" && break
        kill -0 "$nginx_pid" 2>/dev/null || die "nginx exited: $(cat "$nginx_dir/error.log")"
        sleep 0.1
    done
    curl -s -o /dev/null --max-time 1 "$base/" || die "nginx does not answer on $base"
    note "nginx pid $nginx_pid on $base, files land in ${sink#"$root"/}"
}

cleanup() {
    local status=$?
    if [ -n "${daemon_pid:-}" ]; then kill -TERM "$daemon_pid" 2>/dev/null || true; fi
    if [ -n "${watcher_pid:-}" ]; then kill -TERM "$watcher_pid" 2>/dev/null || true; fi
    if [ -n "$nginx_pid" ]; then kill -TERM "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true; fi
    if [ "$mounted_server" = 1 ]; then umount "$server" 2>/dev/null || true; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------------------
# Data sets (on disk under bench/out/data; each run gets hard links, so nothing is copied)

make_data() {
    step "making data sets in ${data#"$root"/}"
    wants small && python3 "$tool" make-data "$data/small" "$small_n" 4096 >/dev/null
    if wants medium || wants rate; then python3 "$tool" make-data "$data/medium" "$medium_n" $((1 << 20)) >/dev/null; fi
    if wants rate && [ "$rate_n" != "$medium_n" ]; then python3 "$tool" make-data "$data/rate" "$rate_n" $((1 << 20)) >/dev/null; fi
    wants big && python3 "$tool" make-data "$data/big" 1 "$big_size" >/dev/null
    wants backlog && python3 "$tool" make-data "$data/backlog" "$backlog_n" 1024 >/dev/null
    sync
}

# Moves the last run's work area aside; it is deleted after the report. The disk here is
# ext4 without a journal, whose inode allocator skips (one by one, with a buffer lookup
# each) every inode freed in the last minutes: deleting a spool of 4,000 manifests right
# before the next run would bill that run for the benchmark's own clean-up.
retire_work() {
    [ -e "$work" ] || return 0
    mkdir -p "$out/trash"
    mv "$work" "$out/trash/work-$(date +%s%N)"
}

# Fresh work area with hard links to a data set's files in $1 (the tool's input dir).
stage() {
    local set="$1" into="$2"
    retire_work
    mkdir -p "$into"
    cp -al "$data/$set/." "$into/"
    find "$into" -name '*.sha256' -delete
}

log_offset() { stat -c %s "$nginx_dir/access.log"; }

# ---------------------------------------------------------------------------------------
# The tools. Each uploads every file of dir $1 to URL prefix $2 (ending with /).

ours_conf() { # ours_conf SPOOL URL_PREFIX [key = value lines...]
    local spool="$1" url="$2"; shift 2
    {
        printf '[uploader]\nlog_level = info\n\n[outbox bench]\nspool = %s\nurl = %s{path}\n' "$spool" "$url"
        local line
        for line in "$@"; do printf '%s\n' "$line"; done
    } >"$work/uploader.conf"
}

tool_curl_loop() {
    local f
    for f in "$1"/*; do curl -sSf -o /dev/null -T "$f" "$2" || return 1; done
}

tool_xargs() {
    (cd "$1" && find . -maxdepth 1 -type f -printf '%f\0' | xargs -0 -P 4 -I{} curl -sSf -o /dev/null -T {} "$2")
}

one_curl_config() { # one curl process, every file over kept-alive connections
    local f
    for f in "$1"/*; do
        printf 'upload-file = "%s"\nurl = "%s%s"\noutput = "/dev/null"\n' "$f" "$2" "${f##*/}"
    done >"$work/curl.cfg"
}

rclone_target() { # rclone_target URL_PREFIX -> ":webdav:PATH" (path part of the prefix)
    local path="${1#"$base"/}"
    printf ':webdav:%s' "${path%/}"
}

tool_rclone() {
    rclone move "$1" "$(rclone_target "$2")" --webdav-url "$base/" --webdav-vendor other \
        --transfers 4 --config /dev/null -q
}

tool_sha_then_curl() { sha256sum "$1"/* >/dev/null && tool_curl_loop "$1" "$2"; }

export -f tool_curl_loop tool_xargs tool_rclone rclone_target tool_sha_then_curl
export base

# ---------------------------------------------------------------------------------------
# One measured run: row tool run set sha256(0|1) -- command...
# Input files are in $work/in (or the outbox for ours); uploads go to $base/$row-$tool-$run/.

measure() {
    local row="$1" name="$2" run="$3" set="$4" sha="$5"; shift 6
    local prefix="$row-$name-$run" offset t0 t1 code=0 tf="$work/time.txt"
    offset="$(log_offset)"
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %U %S %M" -o "$tf" "$@" >"$work/stdout.log" 2>"$work/stderr.log" || code=$?
    t1=$EPOCHREALTIME
    finish_run "$row" "$name" "$run" "$set" "$sha" "$prefix" "$offset" "$t0" "$t1" "$code" "$tf"
}

finish_run() {
    local row="$1" name="$2" run="$3" set="$4" sha="$5" prefix="$6" offset="$7" t0="$8" t1="$9" code="${10}" tf="${11}"
    shift 11
    local verify_args=("$data/$set" "$sink/$prefix")
    [ "$sha" = 1 ] && verify_args+=(--sha256)
    local verdict
    verdict="$(python3 "$tool" verify "${verify_args[@]}")"
    local seconds
    seconds="$(python3 -c "print(round($t1 - $t0, 4))")"
    python3 "$tool" record row="$row" tool="$name" run="$run" set="$set" exit="$code" seconds="$seconds" \
        start="$t0" time="$tf" log="$nginx_dir/access.log:$offset" json.verify="$verdict" \
        load1="$(cut -d' ' -f1 /proc/loadavg)" "$@" >>"$results"
    local ok
    ok="$(python3 -c 'import json,sys; print("ok" if json.loads(sys.argv[1])["ok"] else "NOT OK")' "$verdict")"
    note "$(printf '%-8s %-16s run %s: %8.3f s  exit %s  %s' "$row" "$name" "$run" "$seconds" "$code" "$ok")"
    if [ "$ok" != ok ] || [ "$code" != 0 ]; then
        note "  verify: $verdict"
        tail -n 5 "$work/stderr.log" 2>/dev/null | sed 's/^/      /' >&2 || true
    fi
    rm -rf "$sink/$prefix"
}

run_ours() { # run_ours row name run set sha [conf lines...]
    local row="$1" name="$2" run="$3" set="$4" sha="$5"; shift 5
    stage "$set" "$work/spool/outbox"
    ours_conf "$work/spool" "$base/$row-$name-$run/" "$@"
    measure "$row" "$name" "$run" "$set" "$sha" -- "${ours_bin:-$bin}" run --once --config "$work/uploader.conf"
}

# The same run with the earlier build (BENCH_BEFORE), under the tool name NAME-before.
run_before() { # run_before row name run set sha [conf lines...]
    [ -n "$before" ] || return 0
    local row="$1" name="$2"; shift 2
    ours_bin="$before" run_ours "$row" "$name-before" "$@"
}

# This build and the earlier one, in turn: odd runs this one first, even runs the earlier one
# first. Whichever runs first follows the peers of the run before, and a peer that deletes
# thousands of files (rclone-move) leaves this ext4 slower for the next tool: measured with
# the same build on both sides, the one after rclone-move was about 5 % slower.
run_pair() { # run_pair row name run set sha [conf lines...]
    local run="$3"
    if [ $((run % 2)) -eq 1 ]; then
        run_ours "$@"; run_before "$@"
    else
        run_before "$@"; run_ours "$@"
    fi
}

run_peer() { # run_peer row name run set sha function
    local row="$1" name="$2" run="$3" set="$4" sha="$5" fn="$6"
    stage "$set" "$work/in"
    if [ "$fn" = one_curl ]; then
        one_curl_config "$work/in" "$base/$row-$name-$run/"
        measure "$row" "$name" "$run" "$set" "$sha" -- curl -sSf --config "$work/curl.cfg"
    else
        measure "$row" "$name" "$run" "$set" "$sha" -- bash -c "$fn \"\$@\"" _ "$work/in" "$base/$row-$name-$run/"
    fi
}

# Polls the access log until $1 more PUTs than at byte $2 (or $3 seconds pass).
wait_puts() {
    local want="$1" offset="$2" limit="$3" deadline got
    deadline=$(( $(date +%s) + limit ))
    while :; do
        got="$(tail -c +"$((offset + 1))" "$nginx_dir/access.log" | grep -c '"method":"PUT"' || true)"
        [ "$got" -ge "$want" ] && return 0
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.05
    done
}

# Starts the watcher peer (under /usr/bin/time) on $1 -> URL $2; sets watcher_time_pid, watcher_pid.
start_watcher() {
    local dir="$1" url="$2"
    rm -f "$work/watcher.ready"
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" bash "$here/watcher.sh" "$dir" "$url" "$work/watcher.ready" \
        >"$work/stdout.log" 2>"$work/stderr.log" &
    watcher_time_pid=$!
    local i
    for i in $(seq 200); do [ -e "$work/watcher.ready" ] && break; sleep 0.05; done
    [ -e "$work/watcher.ready" ] || die "watcher script did not start"
    watcher_pid="$(pgrep -P "$watcher_time_pid" | head -n 1)"
}

stop_watcher() {
    kill -TERM "$watcher_pid" 2>/dev/null || true
    wait "$watcher_time_pid" 2>/dev/null || true
}

# The watcher peer on a batch: files are renamed into its watched directory at once.
run_watcher_batch() { # row run set sha
    local row="$1" run="$2" set="$3" sha="$4" name=inotify-curl
    local prefix="$row-$name-$run" offset t0 t1 n
    stage "$set" "$work/staging"
    mkdir -p "$work/watched"
    n="$(find "$work/staging" -type f | wc -l)"
    start_watcher "$work/watched" "$base/$prefix/"
    offset="$(log_offset)"
    t0=$EPOCHREALTIME
    find "$work/staging" -maxdepth 1 -type f -exec mv -t "$work/watched/" {} +
    wait_puts "$n" "$offset" 900 || note "watcher: not all files arrived"
    t1=$EPOCHREALTIME
    # Let the last curl finish removing its file, then stop.
    sleep 0.2
    stop_watcher
    # Wall time ends at the last PUT's end as nginx logged it (the poll adds up to 50 ms).
    t1="$(python3 "$tool" log-summary "$nginx_dir/access.log" "$offset" | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_put_msec"] or 0)')"
    finish_run "$row" "$name" "$run" "$set" "$sha" "$prefix" "$offset" "$t0" "$t1" 0 "$work/time.txt"
}

# ---------------------------------------------------------------------------------------
# Rows

batch_row() { # row set sha peers...
    local row="$1" set="$2" sha="$3"; shift 3
    step "row $row: $(find "$data/$set" -type f ! -name '*.sha256' | wc -l) files from $set, $runs runs each"
    local run peer
    for run in $(seq "$runs"); do
        run_pair "$row" uploader "$run" "$set" "$sha"
        # The 1 MiB files also without a digest: what the peers do, and what hashing costs beside it.
        [ "$row" = medium ] && run_pair "$row" uploader-none "$run" "$set" "$sha" "digest = none"
        for peer in "$@"; do
            case " ${BENCH_PEERS:-$*} " in *" $peer "*) ;; *) continue ;; esac
            case "$peer" in
                inotify-curl) run_watcher_batch "$row" "$run" "$set" "$sha" ;;
                curl-loop) run_peer "$row" curl-loop "$run" "$set" "$sha" tool_curl_loop ;;
                xargs-P4) run_peer "$row" xargs-P4 "$run" "$set" "$sha" tool_xargs ;;
                one-curl) run_peer "$row" one-curl "$run" "$set" "$sha" one_curl ;;
                rclone-move) run_peer "$row" rclone-move "$run" "$set" "$sha" tool_rclone ;;
            esac
        done
    done
}

big_row() {
    step "row big: 1 file of $((big_size >> 20)) MiB, $big_runs runs each"
    local run
    for run in $(seq "$big_runs"); do
        run_pair big uploader-none "$run" big 1 "digest = none"
        run_pair big uploader-sha256 "$run" big 1 "digest = sha256"
        run_peer big curl-T "$run" big 1 tool_curl_loop
        run_peer big sha256sum+curl-T "$run" big 1 tool_sha_then_curl
        run_peer big rclone-move "$run" big 1 tool_rclone
    done
}

# Latency: files written one at a time into a running daemon; close -> complete on the sink.
latency_row() {
    step "row latency: $latency_n files of 4 KiB dropped one at a time, $runs runs each"
    local run
    for run in $(seq "$runs"); do
        # In turn, as `run_pair` does.
        if [ -n "$before" ] && [ $((run % 2)) -eq 0 ]; then latency_ours "$run" uploader-before "$before"; fi
        latency_ours "$run" uploader "$bin"
        if [ -n "$before" ] && [ $((run % 2)) -eq 1 ]; then latency_ours "$run" uploader-before "$before"; fi
        latency_watcher "$run"
    done
}

latency_measure() { # name run dir prefix start_pid_var...
    local name="$1" run="$2" dir="$3" prefix="$4" offset t0 result
    offset="$(log_offset)"
    # Warm up: the sink directory must exist (for inotify) and the connection be open.
    printf 'warm-up\n' >"$dir/warmup.txt"
    wait_puts 1 "$offset" 20 || die "$name: warm-up file never reached the sink"
    offset="$(log_offset)"
    t0=$EPOCHREALTIME
    result="$(python3 "$tool" latency "$dir" "$sink/$prefix" "$latency_n" lat-)"
    echo "$result" >"$work/latency.json"
}

latency_ours() { # latency_ours run name executable
    local run="$1" name="$2" exe="$3" prefix="latency-$2-$1"
    retire_work; mkdir -p "$work/spool/outbox"
    ours_conf "$work/spool" "$base/$prefix/"
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$exe" run --config "$work/uploader.conf" \
        >"$work/stdout.log" 2>"$work/stderr.log" &
    local time_pid=$! i
    for i in $(seq 100); do grep -q "watching outbox" "$work/stderr.log" 2>/dev/null && break; sleep 0.05; done
    daemon_pid="$(pgrep -P "$time_pid" | head -n 1)"
    local offset; offset="$(log_offset)"
    latency_measure "$name" "$1" "$work/spool/outbox" "$prefix"
    kill -TERM "$daemon_pid"; wait "$time_pid" || true; daemon_pid=""
    latency_record "$name" "$run" "$prefix" "$offset"
}

latency_watcher() {
    local run="$1" name=inotify-curl prefix="latency-inotify-curl-$1"
    retire_work; mkdir -p "$work/watched"
    start_watcher "$work/watched" "$base/$prefix/"
    local offset; offset="$(log_offset)"
    latency_measure "$name" "$run" "$work/watched" "$prefix"
    sleep 0.1
    stop_watcher
    latency_record "$name" "$run" "$prefix" "$offset"
}

latency_record() {
    local name="$1" run="$2" prefix="$3" offset="$4" received
    received="$(find "$sink/$prefix" -type f | wc -l)"
    local ok=false
    [ "$received" -eq $((latency_n + 1)) ] && ok=true
    python3 "$tool" record row=latency tool="$name" run="$run" set=latency exit=0 time="$work/time.txt" \
        log="$nginx_dir/access.log:$offset" json.latency="$(cat "$work/latency.json")" \
        json.verify="{\"expected\": $((latency_n + 1)), \"received\": $received, \"ok\": $ok}" >>"$results"
    note "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("latency  %-16s run %s: p50 %.2f ms  p95 %.2f ms  max %.2f ms  lost %d" % (sys.argv[2], sys.argv[3], r["p50_ms"], r["p95_ms"], r["max_ms"], r["lost"]))' "$work/latency.json" "$name" "$run") received $received"
    rm -rf "$sink/$prefix"
}

# Backlog: N small files already queued; time to first upload, peak RSS, files/s.
backlog_row() {
    step "row backlog: $backlog_n files of 1 KiB already in the outbox (one run per tool)"
    run_ours backlog uploader 1 backlog 0
    run_before backlog uploader 1 backlog 0
    # rclone needs ~1 h for 100,000 files here, so it runs for a fixed time on the same
    # backlog and its rate is what it delivered in that time (every delivered file verified).
    stage backlog "$work/in"
    local prefix="backlog-rclone-move-1" offset t0 t1 code=0
    offset="$(log_offset)"
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" timeout -s INT "$rclone_backlog_seconds" \
        bash -c 'tool_rclone "$@"' _ "$work/in" "$base/$prefix/" >"$work/stdout.log" 2>"$work/stderr.log" || code=$?
    t1=$EPOCHREALTIME
    local verdict
    verdict="$(python3 "$tool" verify "$data/backlog" "$sink/$prefix" | python3 -c '
import json, sys
v = json.load(sys.stdin)
# Partial by design: ok when every delivered file is intact.
v["partial"] = True
v["ok"] = v["wrong_size"] == 0 and v["wrong_sha256"] == 0 and v["received"] > 0
print(json.dumps(v))')"
    python3 "$tool" record row=backlog tool=rclone-move run=1 set=backlog exit="$code" seconds="$(python3 -c "print(round($t1 - $t0, 4))")" \
        start="$t0" time="$work/time.txt" log="$nginx_dir/access.log:$offset" json.verify="$verdict" \
        time_limited="$rclone_backlog_seconds" >>"$results"
    note "backlog  rclone-move       run 1: stopped after ${rclone_backlog_seconds} s, $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["received"])' "$verdict") files delivered"
    rm -rf "$sink/$prefix"
}

rate_row() {
    local set=medium
    [ "$rate_n" != "$medium_n" ] && set=rate
    step "row max_rate: $rate_n MiB at max_rate = 20MiB, $runs runs"
    local run
    for run in $(seq "$runs"); do
        run_pair rate uploader-20MiB "$run" "$set" 0 "max_rate = 20MiB"
    done
}

# status: `uploader status` and `status --json` on a spool whose sent/ holds $status_n files,
# and on an empty one. status never lists sent/ (it counts sent_24h from .sent-ledger), so both
# should take the same time; each run checks the count it printed.
status_row() {
    step "row status: uploader status with $status_n files in sent/ and with none, $runs runs each"
    note "$(python3 "$tool" make-sent-spool "$data/status-sent" "$status_n")"
    rm -rf "$data/status-empty"
    mkdir -p "$data/status-empty/outbox" "$data/status-empty/sent" "$data/status-empty/retry"
    printf '{"files": 0, "bytes": 0}\n' >"$data/status-empty/expected.json"
    sync
    local run set json
    for run in $(seq "$runs"); do
        for set in status-empty status-sent; do
            for json in 0 1; do
                status_measure "$run" "$set" "$json" uploader "$bin"
                if [ -n "$before" ]; then status_measure "$run" "$set" "$json" uploader-before "$before"; fi
            done
        done
    done
}

status_measure() { # run set json(0|1) name executable
    local run="$1" set="$2" json="$3" name="$4" exe="$5" code=0 t0 t1 verdict seconds
    [ "$json" = 1 ] && name="$name-json"
    mkdir -p "$work"
    printf '[outbox bench]\nspool = %s\nurl = http://127.0.0.1:9/{path}\n' "$data/$set" >"$work/status.conf"
    local args=(status --config "$work/status.conf")
    [ "$json" = 1 ] && args+=(--json)
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$exe" "${args[@]}" >"$work/stdout.log" 2>"$work/stderr.log" || code=$?
    t1=$EPOCHREALTIME
    verdict="$(python3 "$tool" check-status "$work/stdout.log" "$json" "$data/$set/expected.json")"
    seconds="$(python3 -c "print(round($t1 - $t0, 4))")"
    python3 "$tool" record row=status tool="$name" run="$run" set="$set" exit="$code" seconds="$seconds" \
        time="$work/time.txt" json.verify="$verdict" load1="$(cut -d' ' -f1 /proc/loadavg)" >>"$results"
    note "$(printf 'status   %-20s %-13s run %s: %8.4f s  exit %s  %s' "$name" "$set" "$run" "$seconds" "$code" "$verdict")"
}

# ---------------------------------------------------------------------------------------

machine_info() {
    python3 - "$out/machine.json" <<EOF
import json, subprocess, sys
def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
json.dump({
    "date": "$started_at",
    "finished": sh("date -u +%FT%TZ"),
    "command": "bench/run.sh" + (" (BENCH_QUICK=1)" if "$quick" == "1" else "") + (" BENCH_RUNS=$runs" if "$runs" != "3" else "")
               + (" BENCH_ONLY=\\"$only\\"" if "$only" != "$all_rows" else ""),
    "nproc": sh("nproc"),
    "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-").strip(),
    "memory": sh("free -h | awk '/Mem:/ {print \$2}'"),
    "kernel": sh("uname -r"),
    "disk_df": sh("df -hT '$out' | tail -n 1"),
    "sink": "${BENCH_SINK:-tmpfs}",
    "disk_lsblk": sh("lsblk -d -o NAME,SIZE,ROTA,TYPE,MODEL | sed -n '1,4p'"),
    "commit": sh("git rev-parse --short HEAD") + ("-dirty" if sh("git status --porcelain -- Sources Package.swift") else ""),
    "load_before": "$load_before",
    "load_after": sh("cut -d' ' -f1-3 /proc/loadavg"),
    "versions": {"uploader": sh("'$bin' --version"), "curl": sh("curl --version | head -n1"),
                 "rclone": sh("rclone version 2>/dev/null | head -n1"), "nginx": sh("nginx -v 2>&1"),
                 "inotifywait": sh("inotifywait --help 2>&1 | head -n1")},
    "quick": "$quick" == "1", "runs": $runs,
    "sizes": {"small": $small_n, "medium": $medium_n, "big_bytes": $big_size, "backlog": $backlog_n,
              "latency": $latency_n, "rate": $rate_n, "status_sent": $status_n,
              "rclone_backlog_seconds": $rclone_backlog_seconds},
    "only": "$only",
}, open(sys.argv[1], "w"), indent=1)
EOF
}

main() {
    local t_start=$SECONDS
    install_deps
    build
    load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
    mkdir -p "$out"
    : >"$results"
    rm -rf "$work" "$out/trash"
    # Every row but status uploads to the sink.
    if [ "$only" != status ]; then
        start_nginx
        rm -rf "${sink:?}"/*
    fi
    make_data
    wants small && batch_row small small 0 one-curl xargs-P4 curl-loop inotify-curl rclone-move
    wants medium && batch_row medium medium 1 one-curl xargs-P4 curl-loop inotify-curl rclone-move
    wants big && big_row
    wants latency && latency_row
    wants backlog && backlog_row
    wants rate && rate_row
    wants status && status_row
    machine_info
    step "report"
    # A partial run must not replace the committed report of a full one.
    local report_dir="$here"
    [ "$only" = "$all_rows" ] || report_dir="$out"
    python3 "$here/report.py" "$out" "$here" "$report_dir"
    retire_work
    rm -rf "$out/trash"
    note "done in $((SECONDS - t_start)) s; see ${report_dir#"$root"/}/RESULTS.md"
}

main "$@"

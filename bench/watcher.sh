#!/usr/bin/env bash
# The peer every sysadmin writes: `inotifywait -m` + `curl -T`, one curl per file, the
# file removed once the server said 2xx. Usage: watcher.sh DIR URL_PREFIX READY_FILE
# (URL_PREFIX ends with /; READY_FILE gets "ready" once the watch is set).
# Stops cleanly on SIGTERM (after the upload in progress), reaping inotifywait.
set -uo pipefail
dir="$1"; url="$2"; ready="$3"
fifo="$(mktemp -u)"
mkfifo "$fifo"
inotifywait -m -q -e close_write -e moved_to --format '%f' "$dir" >"$fifo" &
iw=$!
exec 3<"$fifo"
rm -f "$fifo"
stop() { kill "$iw" 2>/dev/null; wait "$iw" 2>/dev/null; exit 0; }
trap stop TERM INT
# inotifywait -q prints nothing once watching; give it a moment, then prove it with a probe.
probe=".watcher-probe"
until [ -e "$ready" ]; do
    : >"$dir/$probe"
    if IFS= read -r -t 0.2 name <&3 && [ "$name" = "$probe" ]; then
        rm -f "$dir/$probe"
        echo ready >"$ready"
    fi
done
while IFS= read -r name <&3; do
    case "$name" in .*) continue ;; esac
    if curl -sSf -o /dev/null -T "$dir/$name" "$url$name"; then
        rm -f "$dir/$name"
    fi
done
stop

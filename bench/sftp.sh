#!/usr/bin/env bash
# The SFTP rows, in one command (as root, on Debian 12):
#
#   bench/sftp.sh
#
# Starts an OpenSSH sshd of its own on 127.0.0.1 and a free port (its own host key, a
# key-only login for root into a tmpfs), makes the data sets under bench/out/sftp/, and
# runs on each set, BENCH_RUNS times in turn: uploader (`run --once`, a release build),
# OpenSSH's `sftp -b` (one batch, one connection) and one `curl` process uploading every
# file over one kept connection (`curl -T` for the big file). After each run it checks the
# SHA-256 of every file the server holds against the data set, and that no temporary name
# is left. Prints one table of medians (wall seconds, files/s or MiB/s, CPU seconds of
# the client, peak RSS) and appends the raw runs to bench/out/sftp/results.tsv.
#
# Environment:
#   BENCH_RUNS=5        runs per tool and data set
#   BENCH_QUICK=1       small data sets, for developing the benchmark itself
#   BENCH_ONLY="medium big small"   rows to run
#   UPLOADER_BIN=PATH   use this executable instead of building one
#   BENCH_TOOLS="ours sftp curl"   tools to run (sftp -b is the baseline of the last column)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../scripts/env.sh
. "$here/../scripts/env.sh"
root="$(repo_root)"
cd "$root"

runs="${BENCH_RUNS:-5}"
only="${BENCH_ONLY:-medium big small}"
if [ "${BENCH_QUICK:-0}" = 1 ]; then
    medium_n=20; big_size=$((64 << 20)); small_n=200
else
    medium_n=200; big_size=$((1 << 30)); small_n=2000
fi

out="$root/bench/out/sftp"
data="$out/data"
work="$out/work"
server="$out/server"
results="$out/results.tsv"

step() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'bench/sftp: error: %s\n' "$*" >&2; exit 1; }
wants() { case " $only " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

[ "$(id -u)" -eq 0 ] || die "run as root (sshd, tmpfs)"
for p in openssh-server openssh-client curl time python3; do
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" = installed ] \
        || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null; }
done

if [ -n "${UPLOADER_BIN:-}" ]; then
    bin="$UPLOADER_BIN"
else
    ensure_swift_on_path
    # What the Debian package ships, as bench/run.sh measures it.
    step "building uploader (release, as the package builds it)"
    mkdir -p "$out"
    bin="$(bash scripts/package-deb.sh --build-only --scratch-path "$root/.build/bench" 2>"$out/build.log" | tail -n 1)" \
        || { tail -n 20 "$out/build.log" >&2; die "the release build failed ($out/build.log)"; }
fi
[ -x "$bin" ] || die "no uploader executable at $bin"

mkdir -p "$out" "$work" "$server"
mountpoint -q "$server" || mount -t tmpfs -o size=3g,mode=0755 bench-sftp "$server"
sshd_pid=""
cleanup() {
    [ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null || true
    mountpoint -q "$server" && umount "$server" || true
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------
# sshd on loopback: host key, a root login by key only, the drop directory on tmpfs.

keys="$out/keys"
rm -rf "$keys" && mkdir -p "$keys" && chmod 700 "$keys"
ssh-keygen -q -t ed25519 -N '' -f "$keys/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$keys/client_key"
cp "$keys/client_key.pub" "$keys/authorized_keys"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$keys/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $keys/host_key
AuthorizedKeysFile $keys/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PidFile none
StrictModes no
Subsystem sftp internal-sftp
EOF
mkdir -p /run/sshd
/usr/sbin/sshd -f "$keys/sshd_config" -D -e 2>"$out/sshd.log" &
sshd_pid=$!
for _ in $(seq 100); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null && break
    sleep 0.05
done
printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$keys/host_key.pub")" >"$keys/known_hosts"
fingerprint="$(ssh-keygen -lf "$keys/host_key.pub" | awk '{print $2}')"
fingerprint_b64="${fingerprint#SHA256:}"

# ---------------------------------------------------------------------------------------
# Data sets and checks

make_set() { # make_set NAME COUNT SIZE
    local dir="$data/$1"
    [ -f "$dir/.complete" ] && return 0
    rm -rf "$dir" && mkdir -p "$dir"
    python3 - "$dir" "$2" "$3" <<'EOF'
import os, sys
directory, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(count):
    with open(os.path.join(directory, "f%05d.bin" % i), "wb") as f:
        left = size
        while left:
            chunk = os.urandom(min(left, 1 << 20))
            f.write(chunk)
            left -= len(chunk)
EOF
    (cd "$dir" && sha256sum -- * | sort -k2 >.sha256)
    touch "$dir/.complete"
}

verify() { # verify SET TARGET: every file there, same bytes, nothing else
    local got
    got="$(cd "$2" && find . -maxdepth 1 -type f -printf '%f\n' | sort | xargs -r sha256sum -- | sort -k2)"
    [ "$got" = "$(cat "$data/$1/.sha256")" ] || die "$2 does not hold exactly the files of $1"
}

# ---------------------------------------------------------------------------------------
# The tools. Each takes SET TARGET_DIR (relative to the server's root, made beforehand).

tool_ours() {
    local set="$1" target="$2" spool="$work/spool"
    rm -rf "$spool" && mkdir -p "$spool/outbox"
    cp -a "$data/$set"/f* "$spool/outbox/"
    sync
    {
        printf '[uploader]\nlog_level = warn\n\n[outbox bench]\nspool = %s\n' "$spool"
        printf 'url = sftp://root@127.0.0.1:%s%s/{path}\n' "$port" "$target"
        printf 'private_key_file = %s\nhost_key_sha256 = %s\nconcurrency = 4\ndigest = none\n' "$keys/client_key" "$fingerprint_b64"
    } >"$work/uploader.conf"
    echo "$bin run --once --config $work/uploader.conf"
}

tool_sftp() {
    local set="$1" target="$2" f
    for f in "$data/$set"/f*; do printf 'put %s %s/\n' "$f" "$target"; done >"$work/batch"
    echo "sftp -q -b $work/batch -i $keys/client_key -P $port -o UserKnownHostsFile=$keys/known_hosts -o BatchMode=yes root@127.0.0.1"
}

tool_curl() {
    local set="$1" target="$2" f
    for f in "$data/$set"/f*; do
        printf 'upload-file = "%s"\nurl = "sftp://root@127.0.0.1:%s%s/%s"\n' "$f" "$port" "$target" "${f##*/}"
    done >"$work/curl.cfg"
    echo "curl -sS --key $keys/client_key --pubkey $keys/client_key.pub --hostpubsha256 $fingerprint_b64 -K $work/curl.cfg"
}

measure() { # measure ROW TOOL RUN SET -> appends a line to results.tsv
    local row="$1" tool="$2" run="$3" set="$4" target="/$server_rel/$1-$2-$3" cmd code=0
    rm -rf "${server:?}/$row-$tool-$run" && mkdir -p "$server/$row-$tool-$run"
    cmd="$("tool_$tool" "$set" "$server/$row-$tool-$run")"
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" $cmd >"$work/out.log" 2>&1 || code=$?
    [ "$code" = 0 ] || die "$tool on $set exited $code: $(tail -n 5 "$work/out.log")"
    verify "$set" "$server/$row-$tool-$run"
    find "$server/$row-$tool-$run" -name '.*' | grep -q . && die "$tool left a temporary name in $target"
    read -r wall user sys rss <"$work/time"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$tool" "$run" "$set" "$wall" "$user" "$sys" "$rss" \
        "$set_count" "$set_size" >>"$results"
    rm -rf "${server:?}/$row-$tool-$run"
}
server_rel="${server#/}"

row() { # row NAME SET COUNT SIZE
    make_set "$2" "$3" "$4"
    set_count="$3" set_size="$4"
    step "row $1: $3 x $4 bytes, $runs runs each"
    local run tool
    for run in $(seq "$runs"); do
        # The tools take turns going first, so none always meets a warm or cold cache.
        local order=(ours sftp curl)
        [ $((run % 3)) = 1 ] && order=(sftp curl ours)
        [ $((run % 3)) = 2 ] && order=(curl ours sftp)
        for tool in "${order[@]}"; do
            case " ${BENCH_TOOLS:-ours sftp curl} " in *" $tool "*) ;; *) continue ;; esac
            measure "$1" "$tool" "$run" "$2"
        done
    done
}

: >"$results"
wants medium && row medium "medium" "$medium_n" $((1 << 20))
wants big && row big "big" 1 "$big_size"
wants small && row small "small" "$small_n" 4096

python3 - "$results" <<'EOF'
import statistics, sys
rows, sizes = {}, {}
for line in open(sys.argv[1]):
    row, tool, run, dataset, wall, user, sys_, rss, count, size = line.split("\t")
    rows.setdefault((row, tool), []).append((float(wall), float(user) + float(sys_), int(rss)))
    sizes[row] = (int(count), int(size))
print("| row | tool | wall s (median) | rate | client CPU s | peak RSS MiB | vs sftp -b |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for row in ["medium", "big", "small"]:
    if (row, "sftp") not in rows:
        continue
    base = statistics.median(w for w, _, _ in rows[(row, "sftp")])
    for tool in ["ours", "sftp", "curl"]:
        runs = rows.get((row, tool))
        if not runs:
            continue
        wall = statistics.median(w for w, _, _ in runs)
        cpu = statistics.median(c for _, c, _ in runs)
        rss = max(r for _, _, r in runs) / 1024
        n = len(runs)
        count, size = sizes[row]
        rate = f"{count / wall:.0f} files/s" if size < (1 << 20) else f"{count * size / wall / (1 << 20):.0f} MiB/s"
        print(f"| {row} ({count} x {size} B) | {tool} | {wall:.2f} (n={n}) | {rate} | {cpu:.2f} | {rss:.1f} | {base / wall:.2f}x |")
EOF

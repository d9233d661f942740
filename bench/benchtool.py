#!/usr/bin/env python3
"""Helpers for bench/run.sh: data sets, nginx access-log summaries, sink verification,
and the drop-one-file-at-a-time latency probe. Standard library only.

Subcommands (each prints one JSON object on stdout):
  make-data DIR COUNT SIZE          COUNT files of SIZE random bytes (kept if already right)
  log-summary LOG OFFSET            requests in nginx's access log after byte OFFSET
  verify MASTER SINK [--sha256]     every file of MASTER arrived in SINK, same size (and hash)
  latency OUTBOX SINK COUNT PREFIX  drop COUNT 4 KiB files one at a time; close -> on the sink
  record KEY=VALUE... [time=FILE] [log=LOG:OFFSET] [json.NAME=JSON]
                                    one result line for results.jsonl (see run.sh)
  make-sent-spool DIR COUNT         a spool whose sent/ holds COUNT delivered files (see below)
  check-status OUTPUT JSON(0|1) EXPECTED
                                    the sent_24h count `uploader status` printed, against EXPECTED
"""
import ctypes
import ctypes.util
import hashlib
import json
import math
import os
import select
import struct
import sys
import time


def make_data(directory, count, size):
    os.makedirs(directory, exist_ok=True)
    names = [f"f{i:06d}.bin" for i in range(count)]
    existing = set(os.listdir(directory))
    if existing == set(names) and all(os.path.getsize(os.path.join(directory, n)) == size for n in names[:10]):
        return {"dir": directory, "files": count, "size": size, "made": 0}
    for stale in existing - set(names):
        os.unlink(os.path.join(directory, stale))
    chunk = 8 << 20
    for name in names:
        with open(os.path.join(directory, name), "wb") as f:
            left = size
            while left > 0:
                n = min(chunk, left)
                f.write(os.urandom(n))
                left -= n
    return {"dir": directory, "files": count, "size": size, "made": count}


def log_summary(log, offset):
    """Counts the requests after `offset`; first/last are nginx $msec (request end)."""
    requests = puts = errors = 0
    first = last = None
    methods = {}
    with open(log, "rb") as f:
        f.seek(offset)
        for line in f:
            try:
                row = json.loads(line)
            except ValueError:
                continue
            requests += 1
            methods[row["method"]] = methods.get(row["method"], 0) + 1
            if row["method"] == "PUT" and 200 <= row["status"] < 300:
                puts += 1
                first = row["msec"] if first is None else min(first, row["msec"])
                last = row["msec"] if last is None else max(last, row["msec"])
            elif row["status"] >= 400:
                errors += 1
    return {"requests": requests, "puts": puts, "errors": errors, "methods": methods,
            "first_put_msec": first, "last_put_msec": last}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            block = f.read(8 << 20)
            if not block:
                return h.hexdigest()
            h.update(block)


def master_hash(path):
    """SHA-256 of a master file, cached beside it (masters never change once made)."""
    cache = path + ".sha256"
    stamp = f"{os.path.getsize(path)} {os.stat(path).st_mtime_ns}"
    if os.path.exists(cache):
        with open(cache) as f:
            saved = f.read().split()
        if len(saved) == 3 and " ".join(saved[:2]) == stamp:
            return saved[2]
    digest = sha256_file(path)
    with open(cache, "w") as f:
        f.write(f"{stamp} {digest}\n")
    return digest


def verify(master, sink, with_sha256):
    names = sorted(n for n in os.listdir(master) if not n.endswith(".sha256"))
    missing, wrong_size, wrong_hash = [], [], []
    for name in names:
        got = os.path.join(sink, name)
        if not os.path.isfile(got):
            missing.append(name)
            continue
        if os.path.getsize(got) != os.path.getsize(os.path.join(master, name)):
            wrong_size.append(name)
            continue
        if with_sha256 and sha256_file(got) != master_hash(os.path.join(master, name)):
            wrong_hash.append(name)
    received = len(os.listdir(sink)) if os.path.isdir(sink) else 0
    ok = not missing and not wrong_size and not wrong_hash and received == len(names)
    return {"expected": len(names), "received": received, "missing": len(missing),
            "wrong_size": len(wrong_size), "wrong_sha256": len(wrong_hash), "sha256_checked": with_sha256,
            "ok": ok, "examples": (missing + wrong_size + wrong_hash)[:5]}


class Inotify:
    """Just enough inotify (through libc) to see a file land in the sink directory."""
    IN_CLOSE_WRITE = 0x008
    IN_MOVED_TO = 0x080

    def __init__(self, directory):
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        wd = self.libc.inotify_add_watch(self.fd, directory.encode(), self.IN_CLOSE_WRITE | self.IN_MOVED_TO)
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory}")

    def wait_for(self, name, deadline):
        """Returns time.time() when `name` appeared, or None at the deadline."""
        want = name.encode()
        while True:
            left = deadline - time.time()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], left)
            if not ready:
                continue
            data = os.read(self.fd, 65536)
            now = time.time()
            offset = 0
            while offset < len(data):
                _, _, _, length = struct.unpack_from("iIII", data, offset)
                raw = data[offset + 16: offset + 16 + length].rstrip(b"\0")
                offset += 16 + length
                if raw == want:
                    return now


def latency(outbox, sink, count, prefix):
    """Writes COUNT 4 KiB files into OUTBOX one at a time (each only after the previous one
    landed in SINK) and returns close -> complete-on-sink latencies in milliseconds."""
    watcher = Inotify(sink)
    samples, lost = [], 0
    payload = os.urandom(4096)
    for i in range(count):
        name = f"{prefix}{i:04d}.bin"
        fd = os.open(os.path.join(outbox, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, payload)
        os.close(fd)
        closed = time.time()
        landed = watcher.wait_for(name, closed + 10)
        if landed is None:
            lost += 1
        else:
            samples.append((landed - closed) * 1000)
        time.sleep(0.02)
    ordered = sorted(samples)

    def pct(p):
        if not ordered:
            return None
        return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]  # nearest rank
    return {"files": count, "lost": lost, "p50_ms": pct(50), "p95_ms": pct(95),
            "max_ms": ordered[-1] if ordered else None, "samples_ms": [round(s, 3) for s in samples]}


SENT_DAYS = 30          # the sent files' manifests are dated over this many days
RECENT_EVERY = 30       # every 30th file was sent within the last 23 h, the rest 25 h to 30 days ago


def make_sent_spool(spool, count):
    """A spool as a daemon with `after_send = keep` leaves it after a month: sent/ holds COUNT
    files (empty: status never opens them) and their manifests, dated over 30 days — every 30th
    within the last 23 h, the rest 25 h to 30 days ago, so the count of the last 24 h holds still
    for an hour. The manifests of the recent ones are whole (a status that reads sent/ reads
    those); the others are empty (such a status only stats them), which spares gigabytes of
    4 KiB blocks. `.sent-ledger` holds the recent ones as a compacted ledger does (one line a
    minute). Made once (COUNT files take a minute or two); later runs only move the dates to now."""
    sent = os.path.join(spool, "sent")
    marker = os.path.join(spool, "made.json")
    made = None
    if os.path.exists(marker):
        with open(marker) as f:
            made = json.load(f)
    for d in ("outbox", "sent", "retry"):
        os.makedirs(os.path.join(spool, d), exist_ok=True)
    now = time.time()
    recent = 0
    minutes = {}
    fresh = made is None or made.get("count") != count
    if fresh:
        for name in os.listdir(sent):
            os.unlink(os.path.join(sent, name))
    for i in range(count):
        name = f"s{i:07d}.bin"
        path = os.path.join(sent, name)
        manifest = path + ".manifest.json"
        if i % RECENT_EVERY == 0:
            when = now - 3600 - (i / count) * 22 * 3600
            recent += 1
            millis = int(when * 1000)
            minute = minutes.setdefault(millis // 60000, [0, 0])
            minute[0] = max(minute[0], millis)
            minute[1] += 1
        else:
            when = now - 25 * 3600 - (i / count) * (SENT_DAYS * 86400 - 25 * 3600)
        if fresh:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o640))
            fd = os.open(manifest, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o640)
            if i % RECENT_EVERY == 0:
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(when))
                os.write(fd, json.dumps({
                    "version": 1, "id": f"00000000-0000-4000-8000-{i:012d}", "profile": "bench", "path": name,
                    "size": 0, "mtime": stamp, "sha256": None, "content_type": "application/octet-stream",
                    "state": "sent", "created_at": stamp, "attempts": [{"started_at": stamp, "ended_at": stamp,
                    "bytes_sent": 0, "http_status": 201, "error": None, "retryable": False}],
                    "next_attempt_at": None, "last_error": None, "stored_as": "sent/" + name,
                    "remote": {"url": "http://127.0.0.1/" + name, "http_status": 201}, "sent_at": stamp}).encode())
            os.close(fd)
        os.utime(manifest, (when, when))
    with open(os.path.join(spool, ".sent-ledger"), "w") as f:
        for key in sorted(minutes):
            newest, files = minutes[key]
            f.write(f"{newest} 0 {files}\n" if files > 1 else f"{newest} 0\n")
    expected = {"files": recent, "bytes": 0}
    with open(os.path.join(spool, "expected.json"), "w") as f:
        json.dump(expected, f)
    with open(marker, "w") as f:
        json.dump({"count": count}, f)
    return {"spool": spool, "count": count, "made": fresh, **expected}


def check_status(output, as_json, expected_path):
    """The files `sent_24h` / `sent (24h)` says, against the expected count."""
    with open(expected_path) as f:
        expected = json.load(f)["files"]
    with open(output) as f:
        text = f.read()
    got = None
    try:
        if as_json:
            got = next(iter(json.loads(text)["profiles"].values()))["sent_24h"]["files"]
        else:
            for line in text.splitlines():
                if line.strip().startswith("sent (24h)"):
                    got = int(line.split(")", 1)[1].split("file")[0].replace(",", "").strip())
    except (ValueError, KeyError, StopIteration, IndexError):
        got = None
    return {"expected": expected, "received": got, "ok": got == expected}


def read_time(path):
    """/usr/bin/time -f "%e %U %S %M" output (the last line; earlier ones may be warnings)."""
    with open(path) as f:
        lines = [l.split() for l in f if l.strip()]
    for fields in reversed(lines):
        if len(fields) == 4:
            try:
                e, u, s, m = (float(x) for x in fields)
                return {"elapsed_s": e, "user_s": u, "sys_s": s, "cpu_s": round(u + s, 3), "max_rss_kib": int(m)}
            except ValueError:
                continue
    return {}


def record(args):
    row = {}
    for arg in args:
        key, _, value = arg.partition("=")
        if key == "time":
            row.update(read_time(value))
        elif key == "log":
            log, _, offset = value.rpartition(":")
            row["log"] = log_summary(log, int(offset))
        elif key.startswith("json."):
            row[key[5:]] = json.loads(value) if value else None
        else:
            try:
                row[key] = int(value)
            except ValueError:
                try:
                    row[key] = float(value)
                except ValueError:
                    row[key] = value
    return row


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    command, args = argv[1], argv[2:]
    if command == "make-data":
        result = make_data(args[0], int(args[1]), int(args[2]))
    elif command == "log-summary":
        result = log_summary(args[0], int(args[1]))
    elif command == "verify":
        result = verify(args[0], args[1], "--sha256" in args[2:])
    elif command == "record":
        result = record(args)
    elif command == "latency":
        result = latency(args[0], args[1], int(args[2]), args[3])
    elif command == "make-sent-spool":
        result = make_sent_spool(args[0], int(args[1]))
    elif command == "check-status":
        result = check_status(args[0], args[1] == "1", args[2])
    else:
        print(f"benchtool: unknown command {command}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

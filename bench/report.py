#!/usr/bin/env python3
"""Turns bench/out/results.jsonl (+ machine.json) into bench/RESULTS.md and bench/results.png.

Usage: report.py OUT_DIR BENCH_DIR [REPORT_DIR]. Medians over runs, spread as min–max, and the
ratio of uploader to each peer computed run by run (run i of the peer against run i of ours).
The hand-written analysis in BENCH_DIR/ANALYSIS.md is appended verbatim. RESULTS.md and
results.png go to REPORT_DIR (default BENCH_DIR).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict

MIB = 1 << 20

ROW_TITLES = {
    "small": "2,000 × 4 KiB, already in the outbox",
    "medium": "200 × 1 MiB, already in the outbox",
    "big": "1 × 1 GiB",
    "backlog": "backlog: 100,000 × 1 KiB already in the outbox",
    "rate": "max_rate = 20MiB, 200 × 1 MiB",
}

# Which uploader variant a peer is compared with, per row.
MEDIUM_PEERS = ("one-curl", "xargs-P4", "curl-loop", "inotify-curl", "rclone-move")
OURS = {"small": "uploader", "backlog": "uploader",
        # The peers hash nothing: they are set beside digest = none, and sha256 beside none.
        "medium": {**{peer: "uploader-none" for peer in MEDIUM_PEERS}, "uploader": "uploader-none",
                   "uploader-before": "uploader", "uploader-none-before": "uploader-none"},
        "big": {"curl-T": "uploader-none", "rclone-move": "uploader-none", "sha256sum+curl-T": "uploader-sha256",
                "uploader-none-before": "uploader-none", "uploader-sha256-before": "uploader-sha256"}}


def load(out):
    with open(os.path.join(out, "results.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    machine = {}
    path = os.path.join(out, "machine.json")
    if os.path.exists(path):
        with open(path) as f:
            machine = json.load(f)
    return rows, machine


def file_size(row, machine):
    sizes = machine.get("sizes", {})
    return {"small": 4096, "medium": MIB, "rate": MIB, "backlog": 1024,
            "big": sizes.get("big_bytes", 1 << 30), "latency": 4096}[row]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, digits=2):
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.{digits}f}"


def group(rows):
    grouped = defaultdict(list)
    order = []
    for r in rows:
        key = (r["row"], r["tool"])
        if key not in grouped:
            order.append(key)
        grouped[key].append(r)
    return grouped, order


def files_of(r):
    v = r.get("verify") or {}
    return v.get("received") if v.get("partial") else v.get("expected")


def seconds_of(r):
    """Wall seconds; for a time-limited run, start to the last delivered file."""
    if r.get("time_limited"):
        last = (r.get("log") or {}).get("last_put_msec")
        return (last - r["start"]) if last else None
    return r.get("seconds")


def summarise(runs, row, machine):
    secs = [seconds_of(r) for r in runs]
    files = median([files_of(r) for r in runs]) or 0
    size = file_size(row, machine)
    med = median(secs)
    reqs = [((r.get("log") or {}).get("requests", 0) / files_of(r)) if files_of(r) else None for r in runs]
    firsts = []
    for r in runs:
        first = (r.get("log") or {}).get("first_put_msec")
        if first and r.get("start"):
            firsts.append(first - r["start"])
    return {
        "runs": len(runs), "files": files, "median_s": med,
        "min_s": min((s for s in secs if s is not None), default=None),
        "max_s": max((s for s in secs if s is not None), default=None),
        "files_per_s": files / med if med else None,
        "mib_per_s": files * size / MIB / med if med else None,
        "cpu_s": median([r.get("cpu_s") for r in runs]),
        "rss_mib": max((r.get("max_rss_kib", 0) for r in runs), default=0) / 1024,
        "req_per_file": median(reqs),
        "first_upload_s": median(firsts),
        "ok": all((r.get("verify") or {}).get("ok") and r.get("exit") in (0, 124) for r in runs),
        "secs": secs,
    }


def ratio(ours_runs, peer_runs):
    """Per-run speed ratios (>1: uploader faster), paired by run index. Rates (files/s), not
    seconds, so a time-limited partial run still compares fairly."""
    ours = {r["run"]: r for r in ours_runs}
    values = []
    for r in peer_runs:
        o = ours.get(r["run"])
        if not o:
            continue
        os_, ps = seconds_of(o), seconds_of(r)
        of, pf = files_of(o), files_of(r)
        if os_ and ps and of and pf:
            values.append((of / os_) / (pf / ps))
    if not values:
        return None
    return median(values), min(values), max(values)


def ours_for(row, tool):
    mapping = OURS.get(row)
    if isinstance(mapping, dict):
        return mapping.get(tool)
    return mapping


def batch_table(row, grouped, order, machine):
    keys = [k for k in order if k[0] == row]
    if not keys:
        return [], {}
    lines = [f"### {ROW_TITLES.get(row, row)}", "",
             "| tool | runs | median s (min–max) | files/s | MiB/s | CPU s | peak RSS MiB | req/file | uploader ÷ peer (speed, per-run median, min–max) | verified |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    stats = {}
    for key in keys:
        s = summarise(grouped[key], row, machine)
        stats[key[1]] = s
        ours = ours_for(row, key[1])
        rel = "–"
        if ours and ours != key[1] and (row, ours) in grouped:
            rr = ratio(grouped[(row, ours)], grouped[key])
            if rr:
                rel = f"**{fmt(rr[0])}×** ({fmt(rr[1])}–{fmt(rr[2])}) vs {ours}"
                s["ratio"] = rr
        name = f"**{key[1]}**" if key[1].startswith("uploader") else key[1]
        lines.append(f"| {name} | {s['runs']} | {fmt(s['median_s'], 3)} ({fmt(s['min_s'], 3)}–{fmt(s['max_s'], 3)}) | "
                     f"{fmt(s['files_per_s'])} | {fmt(s['mib_per_s'])} | {fmt(s['cpu_s'])} | {fmt(s['rss_mib'], 1)} | "
                     f"{fmt(s['req_per_file'])} | {rel} | {'yes' if s['ok'] else '**NO**'} |")
    lines.append("")
    return lines, stats


def latency_table(grouped, order):
    keys = [k for k in order if k[0] == "latency"]
    if not keys:
        return [], {}
    lines = ["### latency: single 4 KiB files dropped one at a time into a running daemon (close → complete on the sink)", "",
             "| tool | runs | p50 ms | p95 ms | max ms | lost | CPU s (whole run) | peak RSS MiB | req/file | verified |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    stats = {}
    for key in keys:
        runs = grouped[key]
        lat = [r["latency"] for r in runs]
        s = {"p50": median([x["p50_ms"] for x in lat]), "p95": median([x["p95_ms"] for x in lat]),
             "max": max((x["max_ms"] or 0) for x in lat), "lost": sum(x["lost"] for x in lat),
             "cpu": median([r.get("cpu_s") for r in runs]),
             "rss": max(r.get("max_rss_kib", 0) for r in runs) / 1024,
             "req": median([r["log"]["requests"] / r["verify"]["expected"] for r in runs]),
             "ok": all(r["verify"]["ok"] for r in runs)}
        stats[key[1]] = s
        lines.append(f"| {key[1]} | {len(runs)} | {fmt(s['p50'])} | {fmt(s['p95'])} | {fmt(s['max'])} | {s['lost']} | "
                     f"{fmt(s['cpu'])} | {fmt(s['rss'], 1)} | {fmt(s['req'])} | {'yes' if s['ok'] else '**NO**'} |")
    lines += ["", "p50/p95 are medians over runs of each run's percentile; max is the worst sample of all runs. "
              "Complete = nginx renamed the body into the sink directory (seen with inotify).", ""]
    return lines, stats


def backlog_table(grouped, order, machine):
    keys = [k for k in order if k[0] == "backlog"]
    if not keys:
        return [], {}
    lines = [f"### backlog: {machine.get('sizes', {}).get('backlog', 100000):,} × 1 KiB already in the outbox", "",
             "| tool | files delivered | s | files/s | time to first upload s | CPU s | peak RSS MiB | req/file | uploader ÷ peer (files/s) | verified |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    stats = {}
    for key in keys:
        s = summarise(grouped[key], "backlog", machine)
        stats[key[1]] = s
        rel = "–"
        if key[1] != "uploader" and ("backlog", "uploader") in grouped:
            rr = ratio(grouped[("backlog", "uploader")], grouped[key])
            if rr:
                rel = f"**{fmt(rr[0])}×**"
                s["ratio"] = rr
        limited = grouped[key][0].get("time_limited")
        note = f" (stopped after {limited} s)" if limited else ""
        lines.append(f"| {key[1]}{note} | {fmt(s['files'])} | {fmt(s['median_s'], 2)} | {fmt(s['files_per_s'])} | "
                     f"{fmt(s['first_upload_s'], 3)} | {fmt(s['cpu_s'])} | {fmt(s['rss_mib'], 1)} | {fmt(s['req_per_file'])} | "
                     f"{rel} | {'yes' if s['ok'] else '**NO**'} |")
    lines.append("")
    return lines, stats


def rate_table(grouped, order, machine):
    keys = [k for k in order if k[0] == "rate"]
    if not keys:
        return [], {}
    n = machine.get("sizes", {}).get("rate", 200)
    expected = n / 20
    lines = [f"### max_rate = 20MiB: {n} × 1 MiB ({n} MiB) should take {expected:.0f} s ± 10 %", "",
             "| tool | runs | median s (min–max) | MiB/s | CPU s | peak RSS MiB | within ±10 % | verified |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    first = None
    for key in keys:
        s_row = summarise(grouped[key], "rate", machine)
        ok_rate = all(x is not None and abs(x - expected) <= 0.1 * expected for x in s_row["secs"])
        if first is None:
            first, within = s_row, ok_rate
        lines.append(f"| {key[1]} | {s_row['runs']} | {fmt(s_row['median_s'], 2)} ({fmt(s_row['min_s'], 2)}–{fmt(s_row['max_s'], 2)}) | "
                     f"{fmt(s_row['mib_per_s'])} | {fmt(s_row['cpu_s'])} | {fmt(s_row['rss_mib'], 1)} | {'yes' if ok_rate else '**no**'} | "
                     f"{'yes' if s_row['ok'] else '**NO**'} |")
    s = first
    lines.append("")
    return lines, {"s": s, "expected": expected, "within": within}


def status_table(grouped, order, machine):
    keys = [k for k in order if k[0] == "status"]
    if not keys:
        return []
    n = machine.get("sizes", {}).get("status_sent", 1000000)
    lines = [f"### status: `uploader status` with {n:,} files in sent/, and with an empty spool", "",
             "| command | spool | runs | median s (min–max) | CPU s | peak RSS MiB | sent_24h files printed | verified |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    by_set = defaultdict(list)
    for r in (r for k in keys for r in grouped[k]):
        by_set[(r["tool"], r["set"])].append(r)
    def place(item):
        tool, set_name = item[0]
        return (tool.removesuffix("-json"), tool.endswith("-json"), set_name != "status-empty")
    for (tool, set_name), runs in sorted(by_set.items(), key=place):
        secs = [r.get("seconds") for r in runs]
        printed = sorted({(r.get("verify") or {}).get("received") for r in runs}, key=str)
        spool = "empty" if set_name == "status-empty" else f"{n:,} in sent/"
        command = "`status --json`" if tool.endswith("-json") else "`status`"
        name = tool[:-len("-json")] if tool.endswith("-json") else tool
        ok = all((r.get("verify") or {}).get("ok") and r.get("exit") == 0 for r in runs)
        lines.append(f"| **{name}** {command} | {spool} | {len(runs)} | {fmt(median(secs), 3)} ({fmt(min(secs), 3)}–{fmt(max(secs), 3)}) | "
                     f"{fmt(median([r.get('cpu_s') for r in runs]))} | {fmt(max(r.get('max_rss_kib', 0) for r in runs) / 1024, 1)} | "
                     f"{', '.join(f'{p:,}' if isinstance(p, int) else str(p) for p in printed)} | {'yes' if ok else '**NO**'} |")
    lines += ["", "Wall time of the whole command (process start to exit). The sent/ spool is what a daemon with "
              "`after_send = keep` leaves after a month: files and manifests dated over 30 days, every 30th "
              "within the last 23 h, and the compacted `.sent-ledger` of those (`bench/benchtool.py make-sent-spool`). "
              "Verified: the sent_24h count printed is the number of files sent within 24 h.", ""]
    return lines


def targets(small, medium, big, latency, backlog, rate):
    out = ["## Targets", "", "| target | measured | met |", "| --- | --- | --- |"]

    def add(name, value, ok):
        out.append(f"| {name} | {value} | {'yes' if ok else '**no**'} |" if ok is not None else f"| {name} | {value} | – |")

    u = small.get("uploader")
    if u:
        add("4 KiB: ≥ 3,000 files/s durable", f"{fmt(u['files_per_s'])} files/s", u["files_per_s"] >= 3000)
        if u.get("cpu_s") is not None and u.get("files"):
            per_file = u["cpu_s"] / u["files"] * 1000
            add("4 KiB: ≤ 0.3 ms CPU per file, system time included", f"{fmt(per_file, 2)} ms", per_file <= 0.3)
        for peer, want in (("rclone-move", 50), ("inotify-curl", 15)):
            r = small.get(peer, {}).get("ratio")
            if r:
                add(f"4 KiB: ≥ {want}× {peer}", f"{fmt(r[0])}×", r[0] >= want)
    r = medium.get("one-curl", {}).get("ratio")
    if r:
        add("1 MiB, digest = none: ≥ 0.8× one kept-alive curl", f"{fmt(r[0])}×", r[0] >= 0.8)
    r = medium.get("uploader", {}).get("ratio")
    if r:
        add("1 MiB, digest = sha256: within 10 % of digest = none", f"none {fmt(r[0])}× as fast", r[0] <= 1.1)
    rss = [medium[k]["rss_mib"] for k in ("uploader", "uploader-none") if k in medium]
    if rss:
        add("peak RSS ≤ 40 MiB on the 1 MiB row", f"{fmt(max(rss), 1)} MiB", max(rss) <= 40)
    r = big.get("curl-T", {}).get("ratio")
    if r:
        add("1 GiB, digest = none: ≥ 0.95× curl -T", f"{fmt(r[0])}×", r[0] >= 0.95)
    r = big.get("sha256sum+curl-T", {}).get("ratio")
    if r:
        add("1 GiB, digest = sha256: no slower than sha256sum then curl -T", f"{fmt(r[0])}×", r[0] >= 1.0)
    lat = latency.get("uploader")
    if lat:
        add("latency p50 ≤ 3 ms", f"{fmt(lat['p50'])} ms", lat["p50"] is not None and lat["p50"] <= 3)
        add("latency p95 ≤ 2 ms", f"{fmt(lat['p95'])} ms", lat["p95"] is not None and lat["p95"] <= 2)
    rss = [big[k]["rss_mib"] for k in ("uploader-none", "uploader-sha256") if k in big]
    if rss:
        add("peak RSS ≤ 40 MiB during the 1 GiB upload", f"{fmt(max(rss), 1)} MiB", max(rss) <= 40)
    b = backlog.get("uploader")
    if b:
        add("peak RSS ≤ 40 MiB with the backlog queued", f"{fmt(b['rss_mib'], 1)} MiB", b["rss_mib"] <= 40)
        add("backlog: ≥ 2,500 files/s", f"{fmt(b['files_per_s'])} files/s", b["files_per_s"] is not None and b["files_per_s"] >= 2500)
        add("time to first upload with the backlog ≤ 1 s", f"{fmt(b['first_upload_s'], 3)} s",
            b["first_upload_s"] is not None and b["first_upload_s"] <= 1)
    if rate:
        add(f"max_rate: {rate['expected']:.0f} s ± 10 %", f"{fmt(rate['s']['median_s'])} s (every run)", rate["within"])
    out.append("")
    return out


def chart(small, medium, big, bench_dir, out_dir):
    """files/s (4 KiB row, log scale) and MiB/s (1 MiB and 1 GiB rows) by tool, with gnuplot."""
    def write(name, stats, key):
        path = os.path.join(out_dir, name)
        with open(path, "w") as f:
            for tool, s in stats.items():
                if s.get(key):
                    f.write(f"\"{tool}\" {s[key]:.3f}\n")
        return path
    panels = [(write("chart-small.dat", small, "files_per_s"), "2,000 × 4 KiB: files/s (log scale)", "#3a7bd5", True),
              (write("chart-medium.dat", medium, "mib_per_s"), "200 × 1 MiB: MiB/s", "#2e9e5b", False),
              (write("chart-big.dat", big, "mib_per_s"), "1 × 1 GiB: MiB/s", "#d5803a", False)]
    panels = [p for p in panels if os.path.getsize(p[0]) > 0]
    if not panels:
        return
    png = os.path.join(bench_dir, "results.png")
    script = f"""
set terminal pngcairo size {500 * len(panels)},520 font ",10"
set output "{png}"
set multiplot layout 1,{len(panels)} title "uploader vs peers, nginx WebDAV sink on 127.0.0.1 (medians; higher is better)"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set xtics rotate by -35 nomirror
set grid ytics
set bmargin 6
unset key
"""
    for path, title, colour, log in panels:
        script += ("set logscale y\nset yrange [1:*]\n" if log else "unset logscale y\nset yrange [0:*]\n")
        script += f'set title "{title}"\n'
        script += (f'plot "{path}" using 2:xtic(1) lc rgb "{colour}", '
                   f'"" using 0:2:(sprintf("%.0f",$2)) with labels offset 0,0.7 notitle\n')
    script += "unset multiplot\n"
    if shutil.which("gnuplot") is None:
        print("report: no gnuplot (BENCH_NO_INSTALL=1?): results.png not drawn", file=sys.stderr)
        return
    script_path = os.path.join(out_dir, "chart.gp")
    with open(script_path, "w") as f:
        f.write(script)
    result = subprocess.run(["gnuplot", script_path], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"report: gnuplot failed: {result.stderr}", file=sys.stderr)


def main(out_dir, bench_dir, report_dir=None):
    report_dir = report_dir or bench_dir
    rows, machine = load(out_dir)
    grouped, order = group(rows)
    doc = ["# Benchmark results", "",
           "Generated by `bench/run.sh` (do not edit by hand: the analysis below comes from "
           "`bench/ANALYSIS.md`). Raw per-run records: `bench/out/results.jsonl` (not committed).", ""]
    loads = [r["load1"] for r in rows if isinstance(r.get("load1"), (int, float))]
    if machine:
        doc += ["## Machine and run", "",
                f"- command: `{machine.get('command')}` (as root, from the repository)",
                f"- date: {machine.get('date')} → {machine.get('finished')}; uploader commit `{machine.get('commit')}`",
                f"- CPU: {machine.get('nproc')} × {machine.get('cpu')}; memory {machine.get('memory')}; kernel {machine.get('kernel')}",
                f"- disk (spool and data sets): `{machine.get('disk_df')}`; the sink (nginx root and body "
                f"temp files) is on {'a tmpfs' if machine.get('sink', 'tmpfs') == 'tmpfs' else 'the same disk'}",
                "- block devices:", "", "```", machine.get("disk_lsblk", ""), "```", "",
                f"- load average (1/5/15 min) before: {machine.get('load_before')}, after: {machine.get('load_after')}"
                + (f"; 1-min load at the end of each run: {min(loads):.2f}–{max(loads):.2f}" if loads else "")
                + " (2 cores shared with nginx and, at times, other engineers' builds; see below)",
                f"- tools: {machine.get('versions', {}).get('uploader')}; {machine.get('versions', {}).get('curl')}; "
                f"{machine.get('versions', {}).get('rclone')}; {machine.get('versions', {}).get('nginx')}; "
                f"{machine.get('versions', {}).get('inotifywait')}",
                f"- runs per tool and data set: {machine.get('runs')} (the 1 GiB row: see its runs column; the backlog: one per tool)" + (" — **QUICK mode: small data sets**" if machine.get("quick") else ""),
                ""]
    tables = []
    small_lines, small = batch_table("small", grouped, order, machine)
    medium_lines, medium = batch_table("medium", grouped, order, machine)
    big_lines, big = batch_table("big", grouped, order, machine)
    lat_lines, latency = latency_table(grouped, order)
    backlog_lines, backlog = backlog_table(grouped, order, machine)
    rate_lines, rate = rate_table(grouped, order, machine)
    doc += targets(small, medium, big, latency, backlog, rate)
    doc += ["## Results", "",
            "Medians over the runs; spread is min–max. **uploader ÷ peer** is how many times faster "
            "uploader was than that peer, computed run by run (run *i* of both in the same pass) — the "
            "median of those ratios, then their min–max. CPU s is user + system of the whole process tree "
            "(`/usr/bin/time`); peak RSS is the largest single process. req/file counts every request "
            "nginx logged (PUT, PROPFIND, MKCOL…). Every run is verified: file count and size for all, "
            "SHA-256 too for the 1 MiB and 1 GiB files.", "", "![files/s and MiB/s by tool](results.png)", ""]
    doc += small_lines + medium_lines + big_lines + lat_lines + backlog_lines + rate_lines + status_table(grouped, order, machine)
    doc += ["### Peers, exactly", "",
            "- **uploader**: `uploader run --once --config <generated>` on a fresh spool (on disk), defaults "
            "(`concurrency = 4`, `digest = sha256`, `log_level = info`) unless the row says otherwise.",
            "- **one-curl**: one `curl --config FILE` process listing every `upload-file`/`url` pair: one "
            "kept-alive connection, no durability — the ceiling.",
            "- **xargs-P4**: `xargs -0 -P 4 -I{} curl -sSf -T {} URL/` (one curl process per file, 4 at a time).",
            "- **curl-loop**: `for f in dir/*; do curl -sSf -T \"$f\" URL/; done`.",
            "- **inotify-curl**: `bench/watcher.sh` — `inotifywait -m -e close_write -e moved_to` piped into "
            "a loop of `curl -T` + `rm`; for the batch rows the files are renamed into its watched "
            "directory at once and the time runs to the last PUT nginx logged.",
            "- **rclone-move**: `rclone move DIR :webdav:PATH --webdav-url http://127.0.0.1:PORT/ "
            "--webdav-vendor other --transfers 4` (nginx gets the dav-ext module for PROPFIND).",
            "- **curl-T** / **sha256sum+curl-T** (1 GiB): `curl -T FILE URL/`, and `sha256sum FILE` then "
            "`curl -T` back to back (what `digest = sha256` must not be slower than).", ""]
    analysis = os.path.join(bench_dir, "ANALYSIS.md")
    if os.path.exists(analysis):
        with open(analysis) as f:
            doc += ["", f.read().rstrip(), ""]
    with open(os.path.join(report_dir, "RESULTS.md"), "w") as f:
        f.write("\n".join(doc) + "\n")
    chart(small, medium, big, report_dir, out_dir)
    print("\n".join(targets(small, medium, big, latency, backlog, rate)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)

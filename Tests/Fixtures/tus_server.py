#!/usr/bin/env python3
"""A real tus 1.0 server for the tus tests: tuspyserver's FastAPI router under uvicorn,
behind a small ASGI middleware that records every request and injects faults.

Usage: tus_server.py FILES_DIR LOG [--fail-patch N]... [--checksum]
Listens on 127.0.0.1 only, on a port the kernel picks; the first stdout line is "PORT <n>".
Uploads are created at /files/ and stored by tuspyserver as FILES_DIR/<id> (+ <id>.info).

LOG gets one JSON object per request when it ends: method, path, headers (lowercased names),
body_bytes and body_sha256 (what arrived of the body), status, response_headers, and
"injected": true on a fault of ours. LOG.inflight always holds the number of requests being
handled, so a test can wait until a request cut by a kill has been dealt with.

  --fail-patch N  answer the N-th PATCH (1-based) with 503, after reading its whole body and
                  without passing it on: the server keeps nothing of that chunk.
  --checksum      advertise the checksum extension with sha256 (OPTIONS); a PATCH's
                  Upload-Checksum is recorded and left to the test to compare.
"""
import argparse
import hashlib
import json
import os
import socket

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router


class Recorder:
    """ASGI middleware: records each request in LOG, answers the chosen PATCHes with 503."""

    def __init__(self, app, log_path, fail_patches, checksum):
        self.app = app
        self.log = open(log_path, "a", encoding="utf-8")
        self.fail_patches = set(fail_patches)
        self.checksum = checksum
        self.patches = 0
        self.inflight_path = log_path + ".inflight"
        self.inflight = 0
        self.count_inflight(0)

    def count_inflight(self, change):
        self.inflight += change
        with open(self.inflight_path + ".tmp", "w", encoding="utf-8") as f:
            f.write("%d\n" % self.inflight)
        os.replace(self.inflight_path + ".tmp", self.inflight_path)

    def write(self, entry):
        self.log.write(json.dumps(entry) + "\n")
        self.log.flush()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        entry = {
            "method": scope["method"],
            "path": scope["path"],
            "headers": {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]},
            "body_bytes": 0,
            "status": None,
            "response_headers": {},
        }
        digest = hashlib.sha256()

        async def recording_receive():
            message = await receive()
            if message["type"] == "http.request":
                body = message.get("body", b"")
                entry["body_bytes"] += len(body)
                digest.update(body)
            return message

        async def recording_send(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if self.checksum and scope["method"] == "OPTIONS":
                    headers = [(k, v + b",checksum" if k.lower() == b"tus-extension" else v) for k, v in headers]
                    headers.append((b"tus-checksum-algorithm", b"sha1,sha256"))
                    message = dict(message, headers=headers)
                entry["status"] = message["status"]
                entry["response_headers"] = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
            await send(message)

        self.count_inflight(1)
        try:
            if scope["method"] == "PATCH":
                self.patches += 1
                if self.patches in self.fail_patches:
                    entry["injected"] = True
                    while True:
                        message = await recording_receive()
                        if message["type"] != "http.request" or not message.get("more_body"):
                            break
                    await recording_send({"type": "http.response.start", "status": 503,
                                          "headers": [(b"tus-resumable", b"1.0.0"), (b"content-length", b"0")]})
                    await send({"type": "http.response.body", "body": b""})
                    return
            await self.app(scope, recording_receive, recording_send)
        finally:
            entry["body_sha256"] = digest.hexdigest()
            self.write(entry)
            self.count_inflight(-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files_dir")
    parser.add_argument("log")
    parser.add_argument("--fail-patch", type=int, action="append", default=[])
    parser.add_argument("--checksum", action="store_true")
    args = parser.parse_args()

    app = FastAPI()
    app.include_router(create_tus_router(prefix="files", files_dir=args.files_dir))
    recorded = Recorder(app, args.log, args.fail_patch, args.checksum)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print("PORT %d" % sock.getsockname()[1], flush=True)
    config = uvicorn.Config(recorded, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()

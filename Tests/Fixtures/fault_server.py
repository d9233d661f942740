#!/usr/bin/env python3
"""Fault-injecting HTTP/1.1 server for the transfer tests (standard library only).

Usage: fault_server.py [PORT] [--exit-on-stdin-eof] [--tls CERT KEY]
Listens on 127.0.0.1 only. With port 0 (the default) the kernel picks one; the first
stdout line is always "PORT <n>".

Control endpoints (not recorded):
  POST /__control   {"script": [behaviour, ...]}  queue consumed one per upload request
  GET|POST /__requests                            JSON list of every recorded request
  POST /__reset                                   forget requests, script and credentials gate
  POST /__auth      {"status": 401, "unless_authorization": "Bearer t"}
                    refuse our credentials: every upload request whose Authorization header
                    is not exactly "unless_authorization" (every one, when it is absent) is
                    answered `status` (401 or 403; the body is read and recorded, marked
                    "refused_credentials"), before the script is looked at; {} lifts the gate

Behaviours (default when the queue is empty: {"status": 200, "body": "ok"}):
  {"status": 503}  {"status": 429, "retry_after": "2"}
  {"status": 201, "headers": {...}, "body": "..."}
  {"reset_after_bytes": N}                  read N body bytes, then close with RST
  {"stall_after_bytes": N, "stall_seconds": S}   read N bytes, stop reading for S s, then 200
  {"slow_body_bytes_per_sec": R}            read the body at R bytes/s, then 200
  {"big_response_bytes": N}                 200 with N bytes of body
  {"garbage_response_bytes": N}             200 with N bytes of binary garbage (NULs, invalid UTF-8)
  {"many_headers": N}                       200 with N extra response headers
  {"echo_headers": true, "status": S}       S (default 200) with the request's headers as the body
  {"discard": true}                         stream the body without keeping it (record only length
                                            and SHA-256), then 201: for bodies of many GiB
  {"close_without_answer": true}            read the whole body, then close the connection without
                                            a byte of answer (on a kept-alive connection libcurl
                                            takes this for a stale connection and may re-send)
  {"close_reused_without_answer": true}     the same on a connection's second and later requests;
                                            the first request on a connection gets 200
  A redirect is {"status": 307, "headers": {"Location": "..."}}.

Recorded requests carry, besides method, path, headers and body: "multipart" (the parts
as Python's email parser sees them) for multipart/form-data, and "json" (the object as
the json module sees it, content_base64 replaced by the decoded bytes' length, sha256 and
text) for application/json.

Exits by itself after IDLE_SECONDS without any request, so nothing lingers.
"""
import base64
import email.parser
import email.policy
import hashlib
import json
import os
import socket
import ssl
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

IDLE_SECONDS = 300
RAW_BODY_LIMIT = 1 << 20

lock = threading.Lock()
script = []
requests = []
auth_gate = None
last_activity = time.monotonic()


def touch():
    global last_activity
    with lock:
        last_activity = time.monotonic()


def parse_multipart(content_type, body):
    """Parts as Python's email parser sees them (the test asserts on this view)."""
    raw = b"Content-Type: " + content_type.encode("latin-1") + b"\r\nMIME-Version: 1.0\r\n\r\n" + body
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(raw)
    parts = []
    if not message.is_multipart():
        return None
    for part in message.iter_parts():
        payload = part.get_payload(decode=True) or b""
        disposition = part.get("Content-Disposition", "")
        params = dict(part.get_params(header="content-disposition", unquote=True) or [])

        def fix(value):
            # Header bytes that are not ASCII arrive surrogate-escaped; give back the UTF-8 text.
            if value is None:
                return None
            try:
                return value.encode("utf-8", "surrogateescape").decode("utf-8")
            except UnicodeError:
                return value
        parts.append({
            "name": fix(params.get("name")),
            "filename": fix(params.get("filename")),
            "content_disposition": fix(str(disposition)),
            "content_type": part.get_content_type() if part.get("Content-Type") else None,
            "length": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
            "value": payload.decode("utf-8", "replace") if len(payload) <= 4096 else None,
        })
    return parts


def parse_json(body):
    """The object as Python's json module sees it; content_base64 is replaced by what it decodes to."""
    value = json.loads(body.decode("utf-8"))
    if isinstance(value, dict) and isinstance(value.get("content_base64"), str):
        content = base64.b64decode(value["content_base64"], validate=True)
        value["content_base64"] = {
            "length": len(content),
            "sha256": hashlib.sha256(content).hexdigest(),
            "text": content.decode("utf-8", "replace") if len(content) <= 4096 else None,
        }
    return value


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def do_GET(self):
        self.dispatch()

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def send_plain(self, status, body=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def read_exact(self, n, rate=None):
        chunks = []
        remaining = n
        started = time.monotonic()
        got = 0
        while remaining > 0:
            want = min(remaining, 65536)
            if rate:
                want = min(want, max(1, rate // 10))
                due = started + got / rate
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            data = self.rfile.read1(want) if hasattr(self.rfile, "read1") else self.rfile.read(want)
            if not data:
                break
            chunks.append(data)
            got += len(data)
            remaining -= len(data)
        return b"".join(chunks)

    def discard_body(self, length):
        """Reads `length` body bytes in chunks, hashing as it goes; returns (count, hex digest)."""
        digest = hashlib.sha256()
        remaining = length
        got = 0
        while remaining > 0:
            data = self.rfile.read1(min(remaining, 1 << 20))
            if not data:
                break
            digest.update(data)
            got += len(data)
            remaining -= len(data)
        return got, digest.hexdigest()

    def record(self, body, length, complete, streamed=None, extra=None):
        entry = {
            "method": self.command,
            "path": self.path,
            "received_at": time.time(),
            "headers": [[k, v] for k, v in self.headers.items()],
            "client_port": self.client_address[1],
            "body_length": len(body),
            "declared_length": length,
            "complete": complete,
            "body_sha256": hashlib.sha256(body).hexdigest(),
            "body_base64": base64.b64encode(body).decode("ascii") if len(body) <= RAW_BODY_LIMIT else None,
        }
        entry.update(extra or {})
        if streamed is not None:
            entry["body_length"], entry["body_sha256"] = streamed
            entry["complete"] = streamed[0] == length
            entry["body_base64"] = None
        content_type = self.headers.get("Content-Type", "")
        if complete and content_type.startswith("multipart/form-data"):
            try:
                entry["multipart"] = parse_multipart(content_type, body)
            except Exception as error:  # a parse failure is itself a test finding
                entry["multipart_error"] = repr(error)
        if complete and content_type.split(";")[0].strip() == "application/json":
            try:
                entry["json"] = parse_json(body)
            except Exception as error:
                entry["json_error"] = repr(error)
        with lock:
            requests.append(entry)

    def dispatch(self):
        touch()
        # One handler object serves one connection: this counts its requests.
        self.served = getattr(self, "served", 0) + 1
        length = int(self.headers.get("Content-Length") or 0)
        if self.path.startswith("/__"):
            body = self.read_exact(length)
            return self.control(body)
        with lock:
            gate = auth_gate
        if gate is not None and self.headers.get("Authorization") != gate.get("unless_authorization"):
            body = self.read_exact(length)
            self.record(body, length, len(body) == length, extra={"refused_credentials": True})
            if len(body) < length:
                self.close_connection = True
                return
            return self.send_plain(gate.get("status", 401), b"credentials refused", {"WWW-Authenticate": "Bearer"})
        with lock:
            behaviour = script.pop(0) if script else {}

        if "reset_after_bytes" in behaviour:
            body = self.read_exact(min(length, behaviour["reset_after_bytes"]))
            self.record(body, length, False)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if "stall_after_bytes" in behaviour:
            first = self.read_exact(min(length, behaviour["stall_after_bytes"]))
            time.sleep(behaviour.get("stall_seconds", 10))
            try:
                rest = self.read_exact(length - len(first))
            except OSError:
                rest = b""
            body = first + rest
            self.record(body, length, len(body) == length)
            if len(body) < length:
                self.close_connection = True
                return
            return self.send_plain(200, b"ok")

        if behaviour.get("discard"):
            streamed = self.discard_body(length)
            self.record(b"", length, streamed[0] == length, streamed=streamed)
            if streamed[0] < length:
                self.close_connection = True
                return
            return self.send_plain(201, b"stored")

        body = self.read_exact(length, behaviour.get("slow_body_bytes_per_sec"))
        self.record(body, length, len(body) == length)
        closes = behaviour.get("close_without_answer") or \
            (behaviour.get("close_reused_without_answer") and self.served > 1)
        if len(body) < length or closes:
            self.close_connection = True
            return
        if "big_response_bytes" in behaviour:
            return self.send_plain(200, b"x" * behaviour["big_response_bytes"])
        if "garbage_response_bytes" in behaviour:
            n = behaviour["garbage_response_bytes"]
            pattern = bytes([0x00, 0xFF, 0xC3, 0x28, 0x0A, 0x1B, 0x22, 0x5C, 0xED, 0xA0, 0x80, 0x7F])
            return self.send_plain(200, (pattern * (n // len(pattern) + 1))[:n],
                                   {"Content-Type": "application/octet-stream"})
        if "many_headers" in behaviour:
            headers = {"X-Filler-%04d" % i: "v" * 40 for i in range(behaviour["many_headers"])}
            headers["ETag"] = '"many"'
            return self.send_plain(200, b"ok", headers)
        if behaviour.get("echo_headers"):
            text = "".join("%s: %s\n" % (k, v) for k, v in self.headers.items())
            return self.send_plain(behaviour.get("status", 200), text.encode("utf-8"))
        status = behaviour.get("status", 200)
        headers = dict(behaviour.get("headers", {}))
        if "retry_after" in behaviour:
            headers["Retry-After"] = behaviour["retry_after"]
        self.send_plain(status, behaviour.get("body", "ok" if status < 300 else "").encode("utf-8"), headers)

    def control(self, body):
        global script, auth_gate
        if self.path == "/__control":
            with lock:
                script = list(json.loads(body or b"{}").get("script", []))
            return self.send_plain(200, b"{}", {"Content-Type": "application/json"})
        if self.path == "/__requests":
            with lock:
                data = json.dumps(requests).encode("utf-8")
            return self.send_plain(200, data, {"Content-Type": "application/json"})
        if self.path == "/__auth":
            gate = json.loads(body or b"{}")
            with lock:
                auth_gate = gate if gate else None
            return self.send_plain(200, b"{}", {"Content-Type": "application/json"})
        if self.path == "/__reset":
            with lock:
                script = []
                auth_gate = None
                requests.clear()
            return self.send_plain(200, b"{}")
        self.send_plain(404)


def watchdog():
    while True:
        time.sleep(1)
        with lock:
            idle = time.monotonic() - last_activity
        if idle > IDLE_SECONDS:
            os._exit(0)


def stdin_watch():
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def main():
    argv = sys.argv[1:]
    tls = None
    if "--tls" in argv:
        at = argv.index("--tls")
        tls = argv[at + 1:at + 3]
        del argv[at:at + 3]
    args = [a for a in argv if not a.startswith("--")]
    port = int(args[0]) if args else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls[0], tls[1])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=watchdog, daemon=True).start()
    if "--exit-on-stdin-eof" in sys.argv:
        threading.Thread(target=stdin_watch, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()

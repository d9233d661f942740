#!/usr/bin/env python3
"""A tiny forwarding HTTP proxy for the proxy tests (Python standard library only).

Usage: forward_proxy.py UPSTREAM_PORT LOG [--port N] [--require-auth USER:PASSWORD] [--fail-once TEXT STATUS]

Listens on 127.0.0.1 (on --port, else a port the kernel picks); the first stdout line is
"PORT <n>". Every request it receives, whatever host its absolute URL names, is forwarded to
127.0.0.1:UPSTREAM_PORT with the same method, path, headers (Host kept as the client sent it,
so signatures over it still hold) and body, and the answer is passed back. Nothing is ever
resolved by name and nothing leaves loopback.

LOG gets one JSON object per request once answered: method, target (as the client wrote it),
host, path, status, and proxy_authorization (the header's value, or null). With
--require-auth, a request without those basic credentials is answered 407 and not forwarded.
With --fail-once, the first request whose path contains TEXT is answered STATUS (its body read,
nothing forwarded); later ones go through.
"""
import argparse
import base64
import http.client
import http.server
import json
import sys
import threading
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate",
              "te", "trailer", "transfer-encoding", "upgrade"}


class Proxy(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port, upstream_port, log_path, credentials):
        super().__init__(("127.0.0.1", port), Handler)
        self.upstream_port = upstream_port
        self.log = open(log_path, "a", encoding="utf-8")
        self.log_lock = threading.Lock()
        self.credentials = credentials
        self.fail_once = None

    def record(self, entry):
        with self.log_lock:
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        pass

    def handle_one_request(self):
        # Every method the same way (PUT, POST, HEAD, MKCOL, PATCH, ...).
        try:
            self.raw_requestline = self.rfile.readline(65537)
            if not self.raw_requestline:
                self.close_connection = True
                return
            if not self.parse_request():
                return
            self.forward()
            self.wfile.flush()
        except (ConnectionError, TimeoutError):
            self.close_connection = True

    def forward(self):
        target = self.path
        parsed = urllib.parse.urlsplit(target)
        path = (parsed.path or "/") + ("?" + parsed.query if parsed.query else "") if parsed.scheme else target
        length = int(self.headers.get("Content-Length") or 0)
        authorization = self.headers.get("Proxy-Authorization")
        entry = {"method": self.command, "target": target, "host": self.headers.get("Host"), "path": path,
                 "proxy_authorization": authorization}
        if self.server.credentials is not None and authorization != "Basic " + self.server.credentials:
            self.rfile.read(length)
            self.send_response_only(407, "Proxy Authentication Required")
            self.send_header("Proxy-Authenticate", 'Basic realm="test proxy"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            entry["status"] = 407
            self.server.record(entry)
            return
        with self.server.log_lock:
            fail = self.server.fail_once if self.server.fail_once and self.server.fail_once[0] in path else None
            if fail:
                self.server.fail_once = None
        if fail:
            self.rfile.read(length)
            self.send_response_only(fail[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            entry["status"] = fail[1]
            self.server.record(entry)
            return
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, timeout=60)
        upstream.putrequest(self.command, path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            if name.lower() not in HOP_BY_HOP:
                upstream.putheader(name, value)
        upstream.endheaders()
        left = length
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 16))
            if not chunk:
                raise ConnectionError("client closed mid-body")
            upstream.send(chunk)
            left -= len(chunk)
        response = upstream.getresponse()
        body = b"" if self.command == "HEAD" else response.read()
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", response.getheader("Content-Length", str(len(body))) if self.command == "HEAD" else str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        upstream.close()
        entry["status"] = response.status
        self.server.record(entry)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("upstream_port", type=int)
    parser.add_argument("log")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--require-auth")
    parser.add_argument("--fail-once", nargs=2, metavar=("TEXT", "STATUS"))
    args = parser.parse_args()
    credentials = base64.b64encode(args.require_auth.encode()).decode() if args.require_auth else None
    server = Proxy(args.port, args.upstream_port, args.log, credentials)
    if args.fail_once:
        server.fail_once = (args.fail_once[0], int(args.fail_once[1]))
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

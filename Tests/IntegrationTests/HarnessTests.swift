import Foundation
import Testing
import XCTest

/// Smoke tests of the integration-test harness itself (no uploader binary needed).
final class HarnessTests: XCTestCase {
    func testNginxSinkReceivesPutBytesIntact() throws {
        let tmp = try TempDir()
        let sink = try NginxSink()
        XCTAssertTrue(sink.baseURL.hasPrefix("http://127.0.0.1:"))

        let small = try tmp.write("hello.txt", "hello, sink\n")
        let big = try tmp.writeRandom("big.bin", count: 3 << 20)
        for (file, path) in [(small, "uploads/hello.txt"), (big, "uploads/deep/er/big.bin")] {
            let put = try ProcessRunner.run(
                ["curl", "-sS", "--fail", "-T", file, "-o", "/dev/null", "-w", "%{http_code}", sink.url(path)])
            XCTAssertEqual(put.exitCode, 0, put.description)
            XCTAssertEqual(put.stdout, "201")
            XCTAssertEqual(try sha256(ofFile: sink.file(path)), try sha256(ofFile: file))
        }
        XCTAssertEqual(try sha256(ofFile: small), sha256(of: Data("hello, sink\n".utf8)))

        // nginx writes the access log line just after the answer: wait for it.
        try waitUntil(timeout: 5, "two access log lines") { sink.accessLog().count >= 2 }
        let log = sink.accessLog()
        XCTAssertEqual(log.count, 2, sink.accessLogLines().joined(separator: "\n"))
        XCTAssertEqual(log.last?["method"] as? String, "PUT")
        XCTAssertEqual(log.last?["uri"] as? String, "/uploads/deep/er/big.bin")
        XCTAssertEqual(log.last?["status"] as? Int, 201)
        XCTAssertGreaterThan(log.last?["request_length"] as? Int ?? 0, 3 << 20)
        XCTAssertNotNil(log.last?["request_time"] as? Double)

        sink.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: sink.root))
        let after = try ProcessRunner.run(["curl", "-sS", "--max-time", "2", sink.baseURL])
        XCTAssertNotEqual(after.exitCode, 0, "nginx still answers after stop()")
    }

    func testNetnsLinkDownAndUpAcrossVeth() throws {
        let netns = try Netns()
        let names = [netns.name(.a), netns.name(.b)]
        XCTAssertTrue(names.allSatisfy(Netns.exists))
        XCTAssertEqual(try netns.linkState(.a), "UP")
        XCTAssertEqual(try netns.linkState(.b), "UP")

        // A sink in b, reached from a over the veth pair.
        let sink = try NginxSink(host: netns.address(.b), port: 8080, netns: netns.name(.b))
        let tmp = try TempDir()
        let file = try tmp.writeRandom("x.bin", count: 100_000)
        let put = try netns.exec(in: .a, ["curl", "-sS", "--fail", "--max-time", "5", "-T", file, sink.url("x.bin")])
        XCTAssertEqual(put.exitCode, 0, put.description)
        XCTAssertEqual(try sha256(ofFile: sink.file("x.bin")), try sha256(ofFile: file))

        try netns.linkDown(.a)
        XCTAssertEqual(try netns.linkState(.a), "DOWN")
        XCTAssertNotEqual(try netns.linkState(.b), "UP")  // LOWERLAYERDOWN: no carrier
        let cut = try netns.exec(in: .a, ["curl", "-sS", "--max-time", "1", sink.baseURL])
        XCTAssertNotEqual(cut.exitCode, 0, "request crossed a link that is down")

        try netns.linkUp()
        try waitUntil(timeout: 10, "the veth link to come back") {
            try netns.linkState(.a) == "UP" && netns.linkState(.b) == "UP"
        }
        try waitUntil(timeout: 10, "the sink to answer across the restored link") {
            try netns.exec(in: .a, ["curl", "-sS", "-o", "/dev/null", "--max-time", "1", sink.baseURL]).exitCode == 0
        }

        sink.stop()
        netns.stop()
        XCTAssertFalse(names.contains(where: Netns.exists), "namespaces left behind")
    }
}

/// The same helpers from Swift Testing, plus the process and polling helpers.
@Suite struct HarnessTestsSwiftTesting {
    @Test func freePortsAreUsableLoopbackPorts() throws {
        let port = try FreePort.next()
        #expect((1024...65535).contains(port))
    }

    @Test func childrenStartWithNoBlockedSignals() throws {
        // Test threads block most signals; children must not inherit that mask.
        // (glibc keeps its internal real-time signals 32 and 33 as they are.)
        let status = try ProcessRunner.run(["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"]).stdout
        let masks = status.split(separator: "\n").compactMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        #expect(masks.count == 2)
        #expect(masks.allSatisfy { $0 & 0x7fff_ffff == 0 }, "\(status)")
    }

    @Test func waitUntilThrowsADescriptiveErrorOnTimeout() throws {
        let start = Date()
        let error = #expect(throws: HarnessError.self) {
            try waitUntil(timeout: 0.2, "the impossible") { false }
        }
        #expect(error?.message.contains("the impossible") == true)
        #expect(Date().timeIntervalSince(start) < 2)
        var n = 0
        try waitUntil(timeout: 5, "a counter") { n += 1; return n == 3 }
        #expect(n == 3)
    }

    @Test func processRunnerCapturesOutputAndEnforcesTimeouts() throws {
        let ok = try ProcessRunner.run(
            ["sh", "-c", "cat; echo err >&2; echo \"$HARNESS_X\"; exit 3"],
            environment: ["HARNESS_X": "x-value"], stdin: Data("in\n".utf8))
        #expect(ok.exitCode == 3)
        #expect(ok.stdout == "in\nx-value\n")
        #expect(ok.stderr == "err\n")

        #expect(throws: HarnessError.self) {
            try ProcessRunner.run(["sleep", "30"], timeout: 0.3)
        }

        let running = try ProcessRunner.start(["sh", "-c", "echo started >&2; exec sleep 30"])
        try waitUntil(timeout: 5, "stderr of the child") { running.stderrText() == "started\n" }
        #expect(running.isRunning)
        running.terminate()
        let ended = try running.waitForExit(timeout: 5)
        #expect(ended.signal == SIGTERM)
        #expect(ended.exitCode == 128 + SIGTERM)
        #expect(!running.isRunning)
    }

    @Test func faultServerLauncherReadsPortAndTalksControl() throws {
        // A stand-in for Tests/Fixtures/fault_server.py with the same control surface.
        let tmp = try TempDir()
        let stub = try tmp.write("stub.py", """
            import json, sys
            from http.server import BaseHTTPRequestHandler, HTTPServer
            state = {"script": [], "requests": []}
            class H(BaseHTTPRequestHandler):
                def log_message(self, *a): pass
                def reply(self, obj):
                    body = json.dumps(obj).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def do_POST(self):
                    data = self.rfile.read(int(self.headers["Content-Length"]))
                    state["script"] = json.loads(data)["script"]
                    self.reply({"ok": True})
                def do_GET(self):
                    if self.path == "/__requests":
                        self.reply(state["requests"])
                    else:
                        state["requests"].append({"method": "GET", "path": self.path, "script": state["script"]})
                        self.reply({})
            server = HTTPServer(("127.0.0.1", int(sys.argv[1])), H)
            print("PORT", server.server_address[1])
            server.serve_forever()
            """)
        let server = try FaultServer(scriptPath: stub)
        #expect(server.port > 0)
        try server.script([["status": 503, "count": 2]])
        let hit = try ProcessRunner.run(["curl", "-sS", server.url("x")])
        #expect(hit.exitCode == 0)
        let requests = try server.requests()
        #expect(requests.count == 1)
        #expect(requests.first?["path"] as? String == "/x")
        #expect((requests.first?["script"] as? [[String: Any]])?.first?["status"] as? Int == 503)
        server.stop()
        #expect(!server.process.isRunning)
    }
}

@preconcurrency import Glibc
import Foundation
import Testing
@testable import UploaderSupport

/// DESIGN §9 on the built binary: `status` shows uploads in flight as they go and why a profile
/// pauses; a drained outbox holds nothing of ours.
@Suite struct LiveViewTests {
    private func profile(_ fixture: ServiceFixture) throws -> [String: Any] {
        let result = try fixture.run(["status", "--json"])
        #expect(result.exitCode == 0, "\(result)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require((object?["profiles"] as? [String: Any])?["p"] as? [String: Any], "no profile p in \(result.stdout)")
    }

    private func inFlight(_ p: [String: Any]) -> [[String: Any]] { p["in_flight"] as? [[String: Any]] ?? [] }

    @Test func aThrottledUploadShowsRisingBytesAPlausibleRateAndAShrinkingETA() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        let rate = 4 << 20
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "max_rate = 4MiB")
        let daemon = try fixture.startDaemon()
        let size = 20 << 20
        try fixture.drop("big.bin", Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) }))

        // Each sample waits for the next refresh that shows more bytes sent than the last one.
        var samples: [(at: Date, entry: [String: Any])] = []
        while !fixture.exists("sent/big.bin.manifest.json") {
            let last = samples.last?.entry["bytes_sent"] as? Int ?? -1
            let entry: [String: Any]? = try waitFor(timeout: 5, "status to show big.bin further than \(last) bytes") {
                if fixture.exists("sent/big.bin.manifest.json") { return [:] }
                guard let e = inFlight(try profile(fixture)).first, (e["bytes_sent"] as? Int ?? -1) > last else { return nil }
                return e
            }
            if let entry, !entry.isEmpty { samples.append((Date(), entry)) }
        }
        #expect(samples.count >= 3, "20 MiB at 4 MiB/s takes 5 s: \(samples.count) samples")
        for (_, e) in samples {
            #expect(e["path"] as? String == "big.bin" && e["size"] as? Int == size, "\(e)")
            #expect(Timestamp.parse(e["started_at"] as? String ?? "") != nil, "\(e)")
        }
        let sent = samples.map { $0.entry["bytes_sent"] as? Int ?? -1 }
        #expect(sent == sent.sorted() && Set(sent).count == sent.count, "bytes_sent rises: \(sent)")
        // After the first second the rate is the throttle's, give or take.
        let rates = samples.dropFirst().map { $0.entry["rate_bytes_per_second"] as? Int ?? -1 }
        for r in rates { #expect(Double(r) > Double(rate) * 0.5 && Double(r) < Double(rate) * 1.5, "rate \(r) for max_rate \(rate)") }
        let etas = samples.compactMap { $0.entry["eta_seconds"] as? Int }
        #expect(etas.count == samples.count, "every sample has an ETA")
        #expect((etas.last ?? 99) < (etas.first ?? 0), "the ETA shrinks: \(etas)")
        #expect(zip(etas, etas.dropFirst()).allSatisfy { $1 <= $0 + 1 }, "the ETA never jumps up: \(etas)")
        print("live view: bytes_sent \(sent), rates \(rates), ETAs \(etas)")

        try waitUntil(timeout: 3, "in_flight to be [] once sent") { inFlight(try profile(fixture)).isEmpty }
        let plain = try fixture.run(["status"]).stdout
        #expect(plain.contains("uploading   0 files, 0 B\n"), "\(plain)")
        #expect(try stopDaemon(daemon).exitCode == 0)

        // Drained: nothing of ours is left in the outbox but the empty hidden `.upl-tmp/`.
        let left = try FileManager.default.contentsOfDirectory(atPath: fixture.outbox)
        #expect(left == [".upl-tmp"], "\(left)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.outbox + "/.upl-tmp") == [])
    }

    @Test func theStateFileIsRefreshedAtLeastOnceASecondWhileUploading() throws {
        let sink = try NginxSink()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: sink.url("up/{path}"), extra: "max_rate = 1MiB")
        let daemon = try fixture.startDaemon()
        try fixture.drop("slow.bin", Data(repeating: 9, count: 4 << 20))
        let stateFile = fixture.spool + "/.state.json"
        func stamp() -> String? {
            guard let data = FileManager.default.contents(atPath: stateFile),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  !((object["in_flight"] as? [Any]) ?? []).isEmpty else { return nil }
            return object["updated_at"] as? String
        }
        var previous = try waitFor(timeout: 10, "an upload in flight in .state.json") { stamp() }
        var changed = Date()
        var gaps: [Double] = []
        for _ in 0..<3 {
            previous = try waitFor(timeout: 5, "the next refresh after \(previous)") { stamp().flatMap { $0 == previous ? nil : $0 } }
            gaps.append(Date().timeIntervalSince(changed))
            changed = Date()
        }
        print("live view: state file refreshed after \(gaps.map { String(format: "%.2f s", $0) })")
        for gap in gaps { #expect(gap < 1.25, "refreshed every \(gaps)") }
        #expect(try stopDaemon(daemon).exitCode == 0)
    }

    @Test func pausedReasonIsOfflineWhileTheDestinationIsDownAndNullAfter() throws {
        let port = try FreePort.next()
        let fixture = try ServiceFixture()
        try fixture.writeConfig(url: "http://127.0.0.1:\(port)/up/{path}")
        let daemon = try fixture.startDaemon()
        try fixture.drop("waiting.bin", Data(repeating: 1, count: 1000))
        try waitUntil(timeout: 15, "paused_reason offline") { try profile(fixture)["paused_reason"] as? String == "offline" }
        let down = try profile(fixture)
        #expect(down["reachable"] as? Bool == false && inFlight(down).isEmpty, "\(down)")
        let plain = try fixture.run(["status"]).stdout
        #expect(plain.contains("\n  paused      offline: "), "\(plain)")

        let sink = try NginxSink(port: port)
        try waitUntil(timeout: 15, "waiting.bin sent once the destination is up") { fixture.exists("sent/waiting.bin.manifest.json") }
        try waitUntil(timeout: 3, "paused_reason null") { try profile(fixture)["paused_reason"] is NSNull }
        #expect(try profile(fixture)["reachable"] as? Bool == true)
        #expect(!(try fixture.run(["status"]).stdout.contains("paused")))
        #expect(FileManager.default.fileExists(atPath: sink.file("up/waiting.bin")))
        #expect(try stopDaemon(daemon).exitCode == 0)
    }
}

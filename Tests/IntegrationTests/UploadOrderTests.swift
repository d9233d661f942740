import Foundation
import Testing

/// `order` (#14): the requests reach the server in the configured order, ties by name.
@Suite struct UploadOrderTests {
    /// name, size, age in seconds: sizes and ages disagree, and two pairs tie.
    static let files: [(String, Int, TimeInterval)] = [("c.bin", 300, 4000), ("a.bin", 100, 1000), ("d.bin", 100, 2000), ("b.bin", 200, 2000)]

    @Test(arguments: [("oldest", ["c", "b", "d", "a"]), ("newest", ["a", "b", "d", "c"]),
                      ("smallest", ["a", "d", "b", "c"]), ("largest", ["c", "b", "a", "d"])])
    func theBacklogReachesTheServerInOrder(_ order: String, _ expected: [String]) throws {
        let sink = try NginxSink()
        let fx = try SpoolFixture(url: sink.url("o/{name}"), extra: "order = \(order)\nconcurrency = 1")
        let now = Date()
        for (name, size, age) in Self.files {
            let path = try fx.drop(name, Data(repeating: 7, count: size))
            try FileManager.default.setAttributes([.modificationDate: now.addingTimeInterval(-age)], ofItemAtPath: path)
        }
        let result = try fx.runOnce()
        #expect(result.exitCode == 0, "\(result.stderr)")
        let uris = sink.accessLog().compactMap { $0["uri"] as? String }
        #expect(uris == expected.map { "/o/\($0).bin" }, "order = \(order)")
    }
}

import Foundation
import Testing
@testable import UploaderSupport

/// `FileLayer.createFiles`: files written and fsynced together each answer on their own.
@Suite("Files created together: each whole, each on its own")
struct CreateTogetherTests {
    @Test func eachFileIsWrittenWholeAndANameTakenFailsAloneLeavingTheOtherFileAsItWas() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("together-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Data("someone else's".utf8).write(to: URL(fileURLWithPath: dir + "/b"))
        let files = ["a", "b", "c"].map { NewFile(Array("record \($0)\n".utf8), named: RelativePath($0), in: dir) }

        let results = LocalFileSystem().createFiles(files)

        #expect(results.count == 3)
        #expect((try? results[0].get()) != nil && (try? results[2].get()) != nil)
        guard case .failure(let error as SystemError) = results[1] else {
            Issue.record("a taken name was created over: \(results[1])")
            return
        }
        #expect(error.code == .exists)
        #expect(FileManager.default.contents(atPath: dir + "/a") == Data("record a\n".utf8))
        #expect(FileManager.default.contents(atPath: dir + "/b") == Data("someone else's".utf8))
        #expect(FileManager.default.contents(atPath: dir + "/c") == Data("record c\n".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["a", "b", "c"])
    }
}

import Foundation
import XCTest
@testable import UploaderSupport
@testable import UploaderConfig
@testable import UploaderSpool
@testable import UploaderTransfer
@testable import UploaderWatch
@testable import UploaderCore
@testable import UploaderDaemon
@testable import UploaderCommands

/// Issue #5: `method = POST | PUT` works with every `body`, and each body decodes to the file.
final class MethodAndBodyTests: XCTestCase {
    func testEveryMethodWithEveryBodyDeliversTheFileIntact() throws {
        let server = try FaultServer()
        let content = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        for method in ["POST", "PUT"] {
            for body in ["raw", "multipart", "json"] {
                let fx = try SpoolFixture(url: server.url("\(method)/\(body)/{name}"),
                                          extra: "method = \(method)\nbody = \(body)\nform.kind = \(body)")
                try fx.drop("f.bin", content)
                let result = try fx.runOnce()
                XCTAssertEqual(result.exitCode, 0, "\(method) \(body): \(result)")
            }
        }
        let requests = try server.recorded()
        XCTAssertEqual(requests.count, 6)
        for request in requests {
            let what = request.path
            let parts = request.path.split(separator: "/").map(String.init)
            XCTAssertEqual(parts.count, 3, what)
            XCTAssertEqual(request.method, parts[0], what)
            XCTAssertEqual(request.header("Content-Length"), String(request.bodyLength), what)
            switch parts[1] {
            case "raw":
                XCTAssertEqual(request.bodySHA256, sha256(of: content), what)
                XCTAssertEqual(request.header("Content-Type"), "application/octet-stream", what)
            case "multipart":
                let file = request.parts?.last
                XCTAssertEqual(request.parts?.map(\.name), ["kind", "file"], what)
                XCTAssertEqual(file?.sha256, sha256(of: content), what)
            case "json":
                XCTAssertEqual(request.json?["kind"] as? String, "json", what)
                XCTAssertEqual((request.json?["content_base64"] as? [String: Any])?["sha256"] as? String, sha256(of: content), what)
            default:
                XCTFail("unexpected request \(what)")
            }
        }
    }
}

@preconcurrency import Glibc
import Foundation

/// The producer user writing one file of the outbox in two halves, holding it open in between
/// until the test says go: a program that writes as its data comes.
final class SlowProducer {
    let file: String
    let wholeSHA256: String
    private let process: RunningProcess
    private let go: String
    private let path: String
    private static let firstHalf = "first-half", secondHalf = ",second-half"

    /// Starts the producer; with `makingDirectory`, it makes that directory (group-writable) first.
    init(_ field: FieldDeployment, file: String, makingDirectory directory: String? = nil) throws {
        self.file = file
        path = field.outbox + "/" + file
        wholeSHA256 = sha256(of: Data((Self.firstHalf + Self.secondHalf).utf8))
        go = field.tmp.path(".go-\(UUID().uuidString)")
        guard mkfifo(go, 0o666) == 0, chmod(go, 0o666) == 0 else { throw HarnessError("mkfifo \(go)") }
        // The directory group-writable (umask 002), as the service needs; the file 0644 (umask 022),
        // so that the service may not link it.
        let mkdir = directory.map { "umask 002 && mkdir '\($0)' && " } ?? ""
        process = try ProcessRunner.start(FieldDeployment.asUser(FieldDeployment.producer, [
            "sh", "-c", "cd \"$0\" && \(mkdir)umask 022 && exec 3>\"$1\" && printf %s \"$2\" >&3 && read x < \"$3\" && printf %s \"$4\" >&3",
            field.outbox, file, Self.firstHalf, go, Self.secondHalf,
        ]), outputDirectory: field.tmp.path)
    }

    func waitUntilFirstHalfWritten() throws {
        try waitUntil(timeout: 15, "the producer to write the first half of \(file)") {
            if !process.isRunning { throw HarnessError("the producer ended: \(process.stderrText())") }
            return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) == Self.firstHalf.utf8.count
        }
    }

    /// Lets the producer write the second half and close the file; returns once it has.
    func finish() throws {
        let fifo = open(go, O_RDWR)
        guard fifo >= 0 else { throw HarnessError("open \(go): \(String(cString: strerror(errno)))") }
        defer { close(fifo) }
        guard write(fifo, "go\n", 3) == 3 else { throw HarnessError("write \(go)") }
        let result = try process.waitForExit(timeout: 15)
        guard result.exitCode == 0 else { throw HarnessError("the producer failed: \(result)") }
    }
}

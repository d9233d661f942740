import UploaderSupport
import UploaderSpool

/// `status` run by a producer, who may reach the outbox but not retry/ nor the sent ledger: the
/// running daemon's own counts of those (in its state file) stand in for what could not be
/// read. Without a running daemon they cannot be known, and each refusal is printed as usual.
final class ProducerCounts {
    private var refused: [SystemError] = []
    private let report: DirectoryWalker.ErrorHandler

    init(reporting report: @escaping DirectoryWalker.ErrorHandler) { self.report = report }

    /// The handler for one census: holds back permission refusals, reports the rest.
    var handler: DirectoryWalker.ErrorHandler {
        { [self] error in if error.code == .permissionDenied { refused.append(error) } else { report(error) } }
    }

    /// `census` with retry, failed and sent_24h from `daemon` when something was refused and the
    /// daemon counted; otherwise `census` as it is, the refusals reported.
    func complete(_ census: SpoolCensus, daemon: DaemonState?) -> SpoolCensus {
        defer { refused = [] }
        guard !refused.isEmpty else { return census }
        guard let counts = daemon?.counts else {
            refused.forEach(report)
            return census
        }
        var completed = census
        completed.retry = SpoolCensus.Tally(files: counts.retry.files, bytes: counts.retry.bytes)
        completed.failed = SpoolCensus.Tally(files: counts.failed.files, bytes: counts.failed.bytes)
        completed.sent24h = SpoolCensus.Tally(files: counts.sent24h.files, bytes: counts.sent24h.bytes)
        return completed
    }
}

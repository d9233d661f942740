/// One upload in flight as the running daemon publishes it in `.state.json` for `status`
/// (`in_flight`): how far it is, how fast it goes now, and when it should end.
package struct InFlightFile: Codable, Sendable, Equatable {
    /// Relative to the outbox, as `path` in its manifest.
    package var path: String
    package var size: Int64
    package var bytesSent: Int64
    package var rateBytesPerSecond: Int64
    /// Nil while nothing moves (no rate to go by).
    package var etaSeconds: Int?
    package var startedAt: String

    package init(path: String, size: Int64, bytesSent: Int64, rateBytesPerSecond: Int64, etaSeconds: Int?, startedAt: String) {
        self.path = path
        self.size = size
        self.bytesSent = bytesSent
        self.rateBytesPerSecond = rateBytesPerSecond
        self.etaSeconds = etaSeconds
        self.startedAt = startedAt
    }

    enum CodingKeys: String, CodingKey {
        case path, size, bytesSent = "bytes_sent", rateBytesPerSecond = "rate_bytes_per_second", etaSeconds = "eta_seconds"
        case startedAt = "started_at"
    }
}

import Foundation
import Synchronization
import UploaderSupport
import UploaderTransfer

/// The destination, scripted by the schedule's choices: what it received, per Idempotency-Key,
/// and which of those bodies it kept (answered 2xx, or kept and then lost the answer). With S3
/// or tus drawn, `speaking` holds the protocol's own state and each of its requests is logged
/// here under the upload it belongs to (the manifest's id), its objects as they are assembled.
final class SimServer: @unchecked Sendable {
    // Used by the thread holding the baton only.

    /// One request that reached the server.
    struct Request {
        var id: String
        var bytes: [UInt8]
        /// The server kept the body (2xx, or an answer lost after the body arrived).
        var kept: Bool
        var status: Int?
        /// The body is not the one its `Content-Digest` declared: the file changed under the upload.
        /// Another version than the one the key names, so it counts neither as a copy of that
        /// version nor as a duplicate of its own content (a server that checks the digest refuses it).
        var torn = false
        /// Counts as an attempt. A plain PUT is one request per attempt; an S3 or tus attempt is
        /// counted by its first request (the first its job sent for the upload), and an object those
        /// protocols assemble (a completed multipart upload, a finished tus upload) is logged as a
        /// kept request that counts as none.
        var opens = true
        /// The attempt (job) it belongs to.
        var job: Int?
    }

    /// Attempts (jobs) that met a refused connect after an earlier request of theirs reached the
    /// server: one ends offline, and an attempt that ends offline is not recorded (DESIGN §5,
    /// "never connected"), though its first request came here.
    private(set) var endedOffline: Set<Int> = []
    func refusedConnect(job: Int) { endedOffline.insert(job) }

    /// The resumable protocol this server speaks (nil: plain PUT).
    var speaking: (any SimProtocolServer)?
    /// Job numbers, unique over the schedule: each job the executor submits sends under its own.
    private(set) var jobsStarted = 0
    func newJob() -> Int {
        jobsStarted += 1
        return jobsStarted
    }
    /// (upload, job) pairs that sent a request: the next request of the pair does not open an attempt.
    private var jobsSeen: Set<String> = []
    /// Whether a request of `job` under `id` is its attempt's first (nil: a part thread's, never).
    func opens(_ id: String, job: Int?) -> Bool {
        guard let job else { return false }
        return jobsSeen.insert("\(id) \(job)").inserted
    }

    private(set) var requests: [Request] = []
    /// Requests under way now, by Idempotency-Key and the attempt (job) they belong to: two
    /// attempts with requests under way at once for one key is a violation (an S3 upload's parts
    /// run side by side within one attempt).
    private(set) var open: [String: [Int: Int]] = [:]
    private(set) var overlaps: [String] = []
    /// The destination is gone (connect refused) or the link is down.
    var reachable = true
    /// After the faults: every request succeeds (the liveness phase).
    var healed = false
    /// The size of the last body a request began to send (the planted `connectFailureAsReset` reports it again).
    var lastBodySize: Int64?
    /// The wall clock, to hold requests to the `Retry-After` the server asked for.
    var now: @Sendable () -> Date = { Date(timeIntervalSince1970: 0) }
    /// `max_backoff`: a `Retry-After` longer than this is cut to it (DESIGN §5).
    var retryAfterCap: Double = .infinity
    /// By Idempotency-Key: the server answered 429 with `Retry-After` for these bytes, so the
    /// same bytes must not come back before this time in another attempt (job) than the one answered.
    private(set) var notBefore: [String: (at: Date, hash: String, job: Int, answeredAt: Date)] = [:]
    /// Requests that came back before the `Retry-After` the server asked for.
    private(set) var early: [String] = []

    /// A request under `id` with `body` begins: counted as under way, and held to its key's `Retry-After`
    /// unless it is no attempt (`heldToRetryAfter` false: the DELETE that ends a tus or S3 upload
    /// abandoned for changed content, sent at once). (Within a millisecond: the manifest keeps times in milliseconds.)
    func begin(_ id: String, _ body: [UInt8], job: Int, heldToRetryAfter: Bool = true) {
        if heldToRetryAfter, let wait = notBefore[id], now() < wait.at.addingTimeInterval(-0.001), SHA256.hash(body).hexString == wait.hash,
           job != wait.job {
            early.append("\(id) came back \(LogNumbers.fixed(wait.at.timeIntervalSince(now()), places: 3)) s before its Retry-After")
        }
        open[id, default: [:]][job, default: 0] += 1
        if open[id]!.count > 1 { overlaps.append(id) }
    }

    /// The server answered `id` with `Retry-After: seconds` for `body`, in attempt `job`.
    func askedToWait(_ id: String, _ seconds: Double, _ body: [UInt8], job: Int) {
        notBefore[id] = (now().addingTimeInterval(min(seconds, retryAfterCap)), SHA256.hash(body).hexString, job, now())
    }

    /// Due times the daemon may no longer know: all (a wall-clock jump), or those `keep` does not
    /// name (a crash took the record, or a disk fault refused the record that was to hold it).
    func forgetDueTimes(keeping keep: Set<String> = []) {
        notBefore = notBefore.filter { keep.contains($0.key) }
    }

    /// The due time of `id` the daemon no longer keeps (`uploader retry` moved its file back); all when nil.
    func forgetDueTimes(of id: String?) {
        if let id { notBefore[id] = nil } else { notBefore = [:] }
    }

    func end(_ id: String, job: Int) {
        open[id, default: [:]][job, default: 1] -= 1
        if open[id]![job] == 0 { open[id]![job] = nil }
    }

    func record(_ request: Request) { requests.append(request) }

    /// The Content-Digest value a body with these bytes carries (RFC 9530, as `BodyDigest` writes it).
    static func digestHeader(_ bytes: [UInt8]) -> String { BodyDigest.header(sha256: SHA256.hash(bytes)) }

    /// Attempts that reached the server under `id` (from request `first` on): see `Request.opens`.
    func requestCount(_ id: String, from first: Int = 0) -> Int { requests[first...].filter { $0.id == id && $0.opens }.count }

    /// As `requestCount`, less the attempts that may have ended offline (`endedOffline`).
    func recordableCount(_ id: String, from first: Int = 0) -> Int {
        requests[first...].filter { $0.id == id && $0.opens && !($0.job.map { endedOffline.contains($0) } ?? false) }.count
    }

    /// SHA-256s of the bodies the server kept for `id`.
    func keptHashes(_ id: String) -> Set<String> {
        Set(requests.filter { $0.id == id && $0.kept && !$0.torn }.map { SHA256.hash($0.bytes).hexString })
    }

    /// Every body the server kept, by content hash → the keys it came under.
    var keptByContent: [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for r in requests where r.kept && !r.torn { out[SHA256.hash(r.bytes).hexString, default: []].insert(r.id) }
        return out
    }
}

/// The transport of the simulated process: each request is one exchange with `SimServer`,
/// with yield points where the network or the process may change under it.
final class SimTransport: Transport {
    let server: SimServer
    let choices: ChoiceSource
    let disk: ProcessView
    let scheduler: SimJobQueue
    /// The planted bug, if any (the transport's and the server's plants live here).
    let plant: Plant?

    init(server: SimServer, choices: ChoiceSource, disk: ProcessView, scheduler: SimJobQueue, plant: Plant?) {
        self.server = server
        self.choices = choices
        self.disk = disk
        self.scheduler = scheduler
        self.plant = plant
    }

    /// What the server does with one request (index 0, what shrinking falls back to, is success).
    enum Answer: Int, CaseIterable {
        case created, serviceUnavailable, tooManyRequests, forbidden, resetMidBody, stall, answerLost, requestTimeout,
             ok, noContent, internalError, badGateway, gatewayTimeout, storedThen5xx, redirect
    }

    static let weights = [56, 5, 14, 2, 6, 3, 4, 2, 4, 4, 1, 1, 1, 3, 1]

    /// A redirect, to another host or to the same one. The transport follows one to the same
    /// scheme and host itself (production's `RedirectFollowing`); what it does not follow reaches
    /// the daemon, which must take it for a permanent failure. Either way the body is not kept.
    static let redirects = [301, 302, 303, 307, 308]
    static let redirectTarget = "http://127.0.0.2:8080/moved"

    /// Where a redirect to the same host points: the same scheme, host and port, under `/moved`.
    static func sameHostTarget(of url: String) -> String {
        guard var parts = URLComponents(string: url) else { return redirectTarget }
        parts.percentEncodedPath = "/moved" + parts.percentEncodedPath
        return parts.string ?? redirectTarget
    }

    /// Production's following of redirects (`RedirectFollowing`) around one exchange. (S3's and
    /// tus's requests meet redirects to another host only, returned as they are.)
    func send(_ request: UploadRequest) -> Result<UploadResponse, TransferFailure> {
        RedirectFollowing.send(request) { url in
            let result = (server.speaking.map { send(request, to: $0) } ?? exchange(request, url: url)).map { answer in
                server.speaking?.speaksHTTP == false ? answer : Self.overTheWire(answer, for: request)
            }
            guard case .success(let response) = result, RedirectFollowing.isRedirect(response.status) else { return (result, nil) }
            return (result, response.location)
        }
    }

    /// One request to `url` and its answer. A request sent again where a redirect pointed is no
    /// new attempt (`SimServer.Request.opens`); if its connect is refused, the attempt ends
    /// offline though its first request reached the server.
    private func exchange(_ request: UploadRequest, url: String) -> Result<UploadResponse, TransferFailure> {
        let opens = url == request.url
        let job = scheduler.job(of: self) ?? -1
        func record(_ logged: SimServer.Request) {
            var logged = logged
            logged.opens = opens
            logged.job = job
            server.record(logged)
        }
        let id = request.headers.first { $0.name == "Idempotency-Key" }?.value ?? ""
        scheduler.requestLeaves()
        scheduler.yield()
        if request.cancellation.isCancelled { return .failure(.cancelled(bytesSent: 0, connected: false)) }
        guard server.reachable, !disk.dead else {
            if plant == .connectFailureAsReset, let previous = server.lastBodySize {
                // The planted bug: the refused connect reported with the previous transfer's byte count.
                return .failure(.broken("Connection reset by peer", bytesSent: previous))
            }
            if !opens { server.refusedConnect(job: job) }
            return .failure(.unreachable("connect to destination: Connection refused"))
        }
        guard let body = readBody(request.body) else {
            // libcurl fails its read callback once headers and some body are out: the request
            // reached the server, cut short, and was not kept.
            record(SimServer.Request(id: id, bytes: [], kept: false, status: nil))
            return .failure(.localRead("read: Input/output error"))
        }
        server.begin(id, body, job: job)
        server.lastBodySize = Int64(body.count)
        // `max_rate`: the body goes out as the limiter grants it, as libcurl's read callback asks it.
        if let limiter = request.rateLimiter {
            var left = body.count
            while left > 0 && !request.cancellation.isCancelled && !disk.dead { left -= limiter.acquire(left) }
        }
        var leftRunning = false
        defer { if !leftRunning { server.end(id, job: job) } }
        let answer = server.healed ? .created : Answer(rawValue: choices.pick(Self.weights))!
        // Half of the body is on the wire: the network, the process or a cancel may strike here.
        scheduler.yield()
        // During a stop the rest of the body takes a while (the planted bug: deaf to the cancel).
        scheduler.wire.carry(request.cancellation, ignoringCancel: plant == .stopOutlastsGrace)
        if disk.dead {
            record(SimServer.Request(id: id, bytes: Array(body.prefix(body.count / 2)), kept: false, status: nil))
            return .failure(.broken("process died", bytesSent: Int64(body.count / 2)))
        }
        if request.cancellation.isCancelled {
            // The planted bug: the connection is not closed, so the server goes on receiving.
            leftRunning = plant == .cancelLeavesRequest
            record(SimServer.Request(id: id, bytes: Array(body.prefix(body.count / 2)), kept: false, status: nil))
            return .failure(.cancelled(bytesSent: Int64(body.count / 2), connected: true))
        }
        if !server.reachable {
            record(SimServer.Request(id: id, bytes: Array(body.prefix(body.count / 2)), kept: false, status: nil))
            return .failure(.broken("stalled: no data moved for 60 s (stall_timeout)", bytesSent: Int64(body.count / 2)))
        }
        let sent = Int64(body.count)
        let declared = request.headers.first { $0.name == "Content-Digest" }?.value
        let torn = declared.map { $0 != SimServer.digestHeader(body) } ?? false
        switch answer {
        case .created, .ok, .noContent:
            let status = [Answer.created: 201, .ok: 200, .noContent: 204][answer]!
            if plant == .silentResend {
                // The planted bug: the body went out first on a dead kept-alive connection, and libcurl sent it again by itself.
                record(SimServer.Request(id: id, bytes: body, kept: true, status: nil, torn: torn))
            }
            record(SimServer.Request(id: id, bytes: body, kept: true, status: status, torn: torn))
            return .success(UploadResponse(status: status, bytesSent: sent, effectiveURL: url))
        case .storedThen5xx:
            // The body is stored, then a proxy in front answers 502 (or the server 503): retried, a duplicate under one key.
            let status = choices.chance(50) ? 502 : 503
            record(SimServer.Request(id: id, bytes: body, kept: true, status: status, torn: torn))
            return .success(UploadResponse(status: status, bytesSent: sent, effectiveURL: url))
        case .serviceUnavailable, .tooManyRequests, .forbidden, .requestTimeout, .internalError, .badGateway, .gatewayTimeout:
            let status = [Answer.serviceUnavailable: 503, .tooManyRequests: 429, .forbidden: 403, .requestTimeout: 408,
                          .internalError: 500, .badGateway: 502, .gatewayTimeout: 504][answer]!
            record(SimServer.Request(id: id, bytes: body, kept: false, status: status))
            let retryAfter = answer == .tooManyRequests || (status == 503 && choices.chance(50)) ? String(20 + choices.below(21)) : nil
            if let retryAfter { server.askedToWait(id, Double(retryAfter)!, body, job: job) }
            return .success(UploadResponse(status: status, retryAfter: retryAfter, bytesSent: sent, effectiveURL: url))
        case .redirect:
            let status = Self.redirects[choices.below(Self.redirects.count)]
            record(SimServer.Request(id: id, bytes: body, kept: false, status: status))
            // Half of them point to the same host: the transport sends the request there again.
            let target = choices.chance(50) ? Self.sameHostTarget(of: url) : Self.redirectTarget
            return .success(UploadResponse(status: status, location: target, bytesSent: sent, effectiveURL: url))
        case .resetMidBody:
            let cut = choices.below(body.count + 1)
            record(SimServer.Request(id: id, bytes: Array(body.prefix(cut)), kept: false, status: nil))
            return .failure(.broken("Connection reset by peer", bytesSent: Int64(cut)))
        case .stall:
            record(SimServer.Request(id: id, bytes: body, kept: false, status: nil))
            return .failure(.broken("stalled: no data moved for 60 s (stall_timeout)", bytesSent: sent))
        case .answerLost:
            record(SimServer.Request(id: id, bytes: body, kept: true, status: 201, torn: torn))
            if plant == .silentResend {
                // The planted bug: the client sends the request again by itself, unrecorded.
                record(SimServer.Request(id: id, bytes: body, kept: true, status: 201, torn: torn))
                return .success(UploadResponse(status: 201, bytesSent: sent, effectiveURL: url))
            }
            return .failure(.broken("connection closed before an answer", bytesSent: sent))
        }
    }

    /// The body's bytes as the server receives them, read through the process's view of the disk.
    func readBody(_ body: RequestBody) -> [UInt8]? {
        var bytes: [UInt8] = []
        for segment in body.segments {
            switch segment {
            case .bytes(let b):
                bytes += b
            case .file(let fd, let offset, let length):
                var chunk = [UInt8](repeating: 0, count: Int(length))
                var got = 0
                while got < Int(length) {
                    let n = chunk.withUnsafeMutableBytes { raw in
                        try? disk.read(fd: fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[got...]), at: offset + Int64(got), path: nil)
                    }
                    guard let n, n > 0 else { break }
                    got += n
                }
                // A file cut short under the upload: libcurl's read callback fails the transfer.
                if got < Int(length) { return nil }
                bytes += chunk
            }
        }
        return bytes
    }
}

/// The prober: can the destination be reached right now?
struct SimProbe: ReachabilityProbe, @unchecked Sendable {
    // Read on the simulator's thread only.
    let server: SimServer
    func check() -> String? { server.reachable ? nil : "connect to destination: No route to host" }
}

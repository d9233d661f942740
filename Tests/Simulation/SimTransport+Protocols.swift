import Foundation
import UploaderSupport
import UploaderTransfer

/// A resumable protocol's server (`SimS3Server`, `SimTusServer`): which upload a request belongs
/// to, what the request does there, and what the client learns from an answer that reaches it.
/// `SimTransport` draws the faults around it as for a plain PUT.
protocol SimProtocolServer: AnyObject {
    /// The manifest id of the upload `request` belongs to ("" for none: tus's OPTIONS).
    func identity(of request: UploadRequest) -> String
    /// The attempt (job) `request` belongs to: the sending job's, or for a part thread (`job`
    /// nil) the job that last sent for its upload.
    func attempt(of request: UploadRequest, job: Int?) -> Int
    /// Applies `request` of `attempt` with `body` as received (`partial`: cut short by a reset) and gives the answer.
    func apply(_ request: UploadRequest, body: [UInt8], partial: Bool, attempt: Int) -> UploadResponse
    /// `answer` to `request` reached the client.
    func delivered(_ request: UploadRequest, _ answer: UploadResponse)
    /// Breaches of the protocol's own invariant, in order.
    var violations: [String] { get }
    /// Whether the protocol can tell a client when to come back (HTTP's `Retry-After`): S3 and
    /// tus can, SFTP cannot, so its refusals set no due time.
    var carriesRetryAfter: Bool { get }
    /// Whether its answers are HTTP responses, sent as header lines (`SimTransport.overTheWire`):
    /// S3's and tus's are; SFTP's reach the client as libcurl's outcomes of its operations.
    var speaksHTTP: Bool { get }
}

extension SimProtocolServer {
    var carriesRetryAfter: Bool { true }
    var speaksHTTP: Bool { true }
}

extension SimServer {
    /// The server of `destination` (none for plain HTTP), checksums offered or not as `choices` says.
    func speak(_ destination: SimDestination, choices: ChoiceSource) {
        switch destination {
        case .http: speaking = nil
        case .s3: speaking = SimS3Server(log: self)
        case .tus: speaking = SimTusServer(log: self, checksum: choices.chance(50))
        case .sftp: speaking = SimSFTPServer(log: self, choices: choices)
        }
    }
}

extension SimTransport {
    /// One request of a resumable protocol: the faults as for a plain PUT (refused, unreachable,
    /// reset, stalled, answer lost, stored then a 5xx), the request itself applied by `speaking`.
    func send(_ request: UploadRequest, to speaking: any SimProtocolServer) -> Result<UploadResponse, TransferFailure> {
        scheduler.requestLeaves()
        scheduler.yield()
        if request.cancellation.isCancelled { return .failure(.cancelled(bytesSent: 0, connected: false)) }
        let job = scheduler.job(of: self)
        let id = speaking.identity(of: request)
        let attempt = speaking.attempt(of: request, job: job)
        guard server.reachable, !disk.dead else {
            if plant == .connectFailureAsReset, let previous = server.lastBodySize {
                return .failure(.broken("Connection reset by peer", bytesSent: previous))
            }
            server.refusedConnect(job: attempt)
            return .failure(.unreachable("connect to destination: Connection refused"))
        }
        guard let body = readBody(request.body) else {
            // As for a plain PUT: libcurl fails its read callback once the request is out, so it
            // reached the server, cut short, and nothing was kept.
            if !id.isEmpty {
                server.record(SimServer.Request(id: id, bytes: [], kept: false, status: nil,
                                                opens: request.method != .delete && server.opens(id, job: job), job: attempt))
            }
            return .failure(.localRead("read: Input/output error"))
        }
        // A request of no upload (tus's OPTIONS) may go beside anything.
        if !id.isEmpty { server.begin(id, [], job: attempt, heldToRetryAfter: request.method != .delete) }
        server.lastBodySize = Int64(body.count)
        var leftRunning = false
        defer { if !leftRunning && !id.isEmpty { server.end(id, job: attempt) } }
        let answer = server.healed ? .created : Answer(rawValue: choices.pick(Self.weights))!
        // The DELETE that ends an upload abandoned for changed content (S3's abort, tus's
        // termination) is no attempt: the attempt opens with the next request of its job.
        let opensAttempt = request.method != .delete
        func logged(_ status: Int?) {
            server.record(SimServer.Request(id: id, bytes: [], kept: false, status: status,
                                            opens: opensAttempt && server.opens(id, job: job), job: attempt))
        }
        scheduler.yield()
        let half = Int64(body.count / 2)
        if disk.dead {
            logged(nil)
            return .failure(.broken("process died", bytesSent: half))
        }
        if request.cancellation.isCancelled {
            leftRunning = plant == .cancelLeavesRequest
            logged(nil)
            return .failure(.cancelled(bytesSent: half, connected: true))
        }
        if !server.reachable {
            logged(nil)
            return .failure(.broken("stalled: no data moved for 60 s (stall_timeout)", bytesSent: half))
        }
        let sent = Int64(body.count)
        func answered(_ response: UploadResponse) -> UploadResponse {
            var response = response
            response.bytesSent = sent
            response.effectiveURL = request.url
            return response
        }
        switch answer {
        case .created, .ok, .noContent:
            let reply = answered(speaking.apply(request, body: body, partial: false, attempt: attempt))
            logged(reply.status)
            speaking.delivered(request, reply)
            return .success(reply)
        case .storedThen5xx:
            _ = speaking.apply(request, body: body, partial: false, attempt: attempt)
            let status = choices.chance(50) ? 502 : 503
            logged(status)
            return .success(answered(UploadResponse(status: status)))
        case .serviceUnavailable, .tooManyRequests, .forbidden, .requestTimeout, .internalError, .badGateway, .gatewayTimeout:
            let status = [Answer.serviceUnavailable: 503, .tooManyRequests: 429, .forbidden: 403, .requestTimeout: 408,
                          .internalError: 500, .badGateway: 502, .gatewayTimeout: 504][answer]!
            logged(status)
            let drawn = answer == .tooManyRequests || (status == 503 && choices.chance(50)) ? String(20 + choices.below(21)) : nil
            let retryAfter = speaking.carriesRetryAfter ? drawn : nil
            // The DELETE that ends an abandoned upload is no attempt (nor held to a wait, `begin`):
            // the daemon logs its failure and goes on, so its answer sets no due time.
            if let retryAfter, request.method != .delete { server.askedToWait(id, Double(retryAfter)!, [], job: attempt) }
            return .success(answered(UploadResponse(status: status, retryAfter: retryAfter)))
        case .redirect:
            // Always to another host: S3's and tus's requests meet no redirect the transport follows.
            let status = Self.redirects[choices.below(Self.redirects.count)]
            logged(status)
            return .success(answered(UploadResponse(status: status, location: Self.redirectTarget)))
        case .resetMidBody:
            let cut = choices.below(body.count + 1)
            if cut > 0 && choices.chance(50) { _ = speaking.apply(request, body: Array(body.prefix(cut)), partial: true, attempt: attempt) }
            logged(nil)
            return .failure(.broken("Connection reset by peer", bytesSent: Int64(cut)))
        case .stall:
            logged(nil)
            return .failure(.broken("stalled: no data moved for 60 s (stall_timeout)", bytesSent: sent))
        case .answerLost:
            let reply = answered(speaking.apply(request, body: body, partial: false, attempt: attempt))
            logged(reply.status)
            if plant == .silentResend {
                // The client sends the request again by itself, unrecorded.
                let again = answered(speaking.apply(request, body: body, partial: false, attempt: attempt))
                logged(again.status)
                speaking.delivered(request, again)
                return .success(again)
            }
            return .failure(.broken("connection closed before an answer", bytesSent: sent))
        }
    }
}

import Foundation
import Synchronization
import UploaderSupport
import UploaderConfig

/// WebDAV servers (Apache `mod_dav`, Nextcloud) answer `409 Conflict` to a PUT into a collection
/// that does not exist yet, so a url such as `…/dav/{date}/{path}` would never land. On that
/// answer, within the same attempt: MKCOL each collection of the file's URL not known to exist,
/// from the top (parents first; `201` made, `405` already there), then the PUT once more.
///
/// A transport detail of one attempt, not a decision of the core: the attempt is the PUT, and
/// what it ends with (the second PUT's answer, or the MKCOL that was refused, classified as the
/// PUT's answer would be) is its result. Collections of the url's fixed part (before its first
/// placeholder, e.g. `/remote.php/dav/files/cam7/`) may lie outside what the server lets us
/// create: a refusal there (a 4xx) is passed over, and a missing one shows as the 409 of the
/// collection below it. The MKCOLs carry the PUT's headers (`Authorization`, `User-Agent`,
/// `header.*`) but none that describe its body, and go the same way (TLS, proxy, timeouts).
package struct WebDAVCollections: Sendable {
    /// The path of the url's fixed part up to its last `/`: collections at or above it are the
    /// operator's, below it the placeholders'.
    let fixedPath: String
    let known: KnownCollections

    /// Nil unless the profile uploads with plain PUTs to an `http(s)://` url.
    package init?(profile: Profile, known: KnownCollections) {
        guard case .http(let url) = profile.destination, profile.uploadProtocol == .http, profile.method == .put else { return nil }
        var literal = ""
        if case .literal(let text)? = url.template.parts.first { literal = text }
        let path = Self.split(literal)?.path ?? "/"
        fixedPath = String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
        self.known = known
    }

    /// Sends the PUT `request`; on a 409, makes the missing collections and sends it again.
    package func send(_ request: UploadRequest, over transport: any Transport) -> Result<UploadResponse, TransferFailure> {
        let first = transport.send(request)
        guard request.method == .put, case .success(let conflict) = first, conflict.status == 409 else { return first }
        let plan = collections(of: request.url)
        guard !plan.isEmpty else { return first }
        var missing = plan.filter { !known.contains($0.url) }
        if missing.isEmpty {
            // Every one was known, yet the server says one is missing: it was removed meanwhile.
            known.forget(plan.map(\.url))
            missing = plan
        }
        for collection in missing {
            if request.cancellation.isCancelled { return .failure(.cancelled(bytesSent: conflict.bytesSent, connected: true)) }
            switch makeCollection(collection, like: request, over: transport) {
            case .success(let answer) where Self.isThere(answer.status):
                known.insert(collection.url)
            case .success(let answer) where collection.fixed && Self.isRefusal(answer.status):
                known.insert(collection.url)
            case .success(var answer):
                known.forget(plan.map(\.url))
                let phrase = answer.statusText.isEmpty ? HTTPStatus.standardPhrase(answer.status) : answer.statusText
                answer.statusText = "\(phrase) (MKCOL \(collection.path))"
                answer.bytesSent = conflict.bytesSent
                return .success(answer)
            case .failure(let failure):
                known.forget(plan.map(\.url))
                return .failure(Self.afterContact(failure, bytesSent: conflict.bytesSent))
            }
        }
        return transport.send(request).mapError { Self.afterContact($0, bytesSent: 0) }
    }

    /// The MKCOL of one collection. Another worker (or another client) making the same collection
    /// at the same instant makes the server's mkdir fail, which Apache `mod_dav` answers `403`: an
    /// answer that neither made it nor found it there is asked once more, and a collection made
    /// meanwhile then answers `405`.
    private func makeCollection(_ collection: Collection, like request: UploadRequest,
                                over transport: any Transport) -> Result<UploadResponse, TransferFailure> {
        let mkcol = Self.mkcol(collection.url, like: request)
        let first = transport.send(mkcol)
        guard case .success(let answer) = first, !Self.isThere(answer.status), !request.cancellation.isCancelled else { return first }
        return transport.send(mkcol)
    }

    /// The collection is there: made now (2xx) or already (405).
    private static func isThere(_ status: Int) -> Bool { (200...299).contains(status) || status == 405 }

    /// One collection of a file's URL: absolute URL and path (both ending in `/`), and whether
    /// it lies within the url's fixed part.
    struct Collection: Equatable {
        var url: String
        var path: String
        var fixed: Bool
    }

    /// The collections above the file `url` names, top first (the root excluded); empty when
    /// its path has an empty segment (`a//b`: nothing sensible to make).
    func collections(of url: String) -> [Collection] {
        guard let (origin, path) = Self.split(url) else { return [] }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().dropLast()
        guard !segments.contains(where: \.isEmpty) else { return [] }
        var collections: [Collection] = []
        var current = "/"
        for segment in segments {
            current += segment + "/"
            collections.append(Collection(url: origin + current, path: current, fixed: fixedPath.hasPrefix(current)))
        }
        return collections
    }

    /// `scheme://authority` and the path (without query or fragment) of an `http(s)://` URL.
    static func split(_ url: String) -> (origin: String, path: String)? {
        guard let marker = url.range(of: "://") else { return nil }
        let rest = url[marker.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let afterAuthority = rest[authorityEnd...]
        let path = afterAuthority.prefix { $0 != "?" && $0 != "#" }
        return (String(url[..<authorityEnd]), path.isEmpty ? "/" : String(path))
    }

    /// The MKCOL of `url`: the PUT's way and credentials, no body and none of the body's headers
    /// (its `Idempotency-Key` is the PUT's own: a server keeping keys must not take the PUT for a repeat).
    static func mkcol(_ url: String, like put: UploadRequest) -> UploadRequest {
        var request = put
        request.url = url
        request.method = .mkcol
        request.body = RequestBody([])
        request.headers = put.headers.filter {
            let name = $0.name.lowercased()
            return !name.hasPrefix("content-") && name != "idempotency-key"
        }
        request.rateLimiter = nil
        request.progress = nil
        request.sourcePath = nil
        request.keepHeaders = []
        return request
    }

    /// A 4xx that says "not here" rather than "later" (408 and 429 ask to come back).
    static func isRefusal(_ status: Int) -> Bool { (400...499).contains(status) && status != 408 && status != 429 }

    /// A failure after the first PUT reached the destination: the attempt is one (DESIGN §1), so a
    /// connect that fails now is a broken exchange, and a cancellation keeps the attempt.
    static func afterContact(_ failure: TransferFailure, bytesSent: Int64) -> TransferFailure {
        switch failure {
        case .unreachable(let message): return .broken(message, bytesSent: bytesSent)
        case .cancelled(let bytes, _): return .cancelled(bytesSent: max(bytes, bytesSent), connected: true)
        default: return failure
        }
    }
}

/// The collections a profile's WebDAV server is known to hold (or that are not ours to make), by
/// absolute URL: shared by the profile's workers and kept for the process's life (a reload hands
/// it to the new runner), so each collection costs its MKCOL once.
package final class KnownCollections: Sendable {
    private let urls = Mutex(Set<String>())

    package init() {}

    func contains(_ url: String) -> Bool { urls.withLock { $0.contains(url) } }
    func insert(_ url: String) { _ = urls.withLock { $0.insert(url) } }
    func forget(_ list: [String]) { urls.withLock { $0.subtract(list) } }
    package var count: Int { urls.withLock { $0.count } }
}

import Foundation
import UploaderSupport

/// The whole validated configuration: global settings plus one `Profile` per `[outbox NAME]`.
package struct Configuration: Sendable {
    package var path: String
    package var global: GlobalSettings
    package var profiles: [Profile]

    package init(path: String, global: GlobalSettings, profiles: [Profile]) {
        self.path = path
        self.global = global
        self.profiles = profiles
    }
}

/// The `[uploader]` section.
package struct GlobalSettings: Sendable, Equatable {
    package var logLevel: LogLevel = .info
    package var logFormat: LogFormat = .text
    package var metricsFile: String? = nil
    /// `index`: where `run` publishes the secret-free profile index producers read (`ProfileIndex`).
    package var index: String? = nil

    package init() {}
}

/// One `[outbox NAME]` section, typed: no strings to interpret past the config layer.
package struct Profile: Sendable {
    package var name: String
    package var spool: SpoolPaths
    package var destination: Destination
    /// `protocol`: one request per upload (`http`), or tus 1.0 resumable uploads (`tus`, DESIGN §10).
    package var uploadProtocol: UploadProtocol = .http
    /// `tus_chunk_size`: the body of each tus PATCH.
    package var tusChunkSize: Int64 = TusSettings.defaultChunkSize
    package var method: HTTPMethod = .put
    package var body: BodyFormat = .raw
    package var multipartField: String = "file"
    package var formFields: [TemplatedField] = []
    package var headers: [TemplatedField] = []
    package var auth: Auth = .none
    package var tls = TLSOptions()
    /// `proxy`: every request and the reachability probe go through it; nil = libcurl's
    /// environment variables (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`).
    package var proxy: ProxyURL? = nil
    package var concurrency: Int = 4
    package var connectTimeout: TimeInterval = 10
    package var stallTimeout: TimeInterval = 60
    package var timeout: TimeInterval = 0
    package var maxAttempts: Int = 10
    package var digest: DigestMode = .sha256
    package var backoff: TimeInterval = 30
    package var maxBackoff: TimeInterval = 3600
    /// `max_rate`: one cap, or a timetable by local time.
    package var maxRate: RateSchedule = .constant(0)
    /// `order`: which waiting file starts next.
    package var order: UploadOrder = .oldest
    /// `upload_window`: when uploads may start (local time); empty = always.
    package var uploadWindows = UploadWindows()
    /// `interfaces`: the route to the destination must leave by one of these; empty = any.
    package var interfaces: [String] = []
    package var recursive: Bool = false
    package var ignore: [String] = Profile.defaultIgnore
    package var rescan: TimeInterval = 0
    package var keepSent: TimeInterval = 0
    /// `keep_sent_bytes`: the most sent/ may hold (files and manifests), oldest deleted first; 0 = no bound.
    package var keepSentBytes: Int64 = 0
    /// `after_send`: what becomes of a delivered file once its move (and its `on_sent` hook) is done.
    package var afterSend: AfterSend = .keep
    package var shutdownGrace: TimeInterval = 30
    package var onSent: String? = nil
    package var onFailed: String? = nil
    package var hookTimeout: TimeInterval = 30
    /// `producers`: the group whose members drop files; its outbox is made `2770 service:GROUP`.
    package var producers: String? = nil
    /// Config line of the section header, for messages about the profile as a whole.
    package var line: Int = 0

    package static let defaultIgnore = ["*.tmp", "*.part", "*.partial", "*.crdownload", "*~", "*.swp"]

    package init(name: String, spool: SpoolPaths, destination: Destination) {
        self.name = name
        self.spool = spool
        self.destination = destination
    }
}

/// A profile's three directories (absolute paths, no trailing slash) and its lock file.
package struct SpoolPaths: Sendable, Equatable {
    package var root: String
    package var outbox: String
    package var sent: String
    package var retry: String

    package init(root: String, outbox: String? = nil, sent: String? = nil, retry: String? = nil) {
        self.root = root
        self.outbox = outbox ?? root + "/outbox"
        self.sent = sent ?? root + "/sent"
        self.retry = retry ?? root + "/retry"
    }

    package var lockFile: String { root + "/.lock" }
    /// Where outbox manifests are written before their rename (hidden, so never watched).
    package var outboxTemporary: String { outbox + "/.upl-tmp" }
    /// Small JSON file a running daemon keeps for `status` (pid, reachability, last error).
    package var stateFile: String { root + "/.state.json" }
    /// Where unreadable manifests are moved aside, never deleted.
    package var quarantine: String { root + "/.quarantine" }
    /// One marker per hook due (`HookLedger`), so start-up finds them without reading sent/.
    package var hooksDue: String { root + "/.hooks-due" }
    /// The deliveries of the last 24 h (`SentLedger`), so `status` counts them without reading sent/.
    package var sentLedger: String { root + "/.sent-ledger" }
}

/// Where uploads go.
package enum Destination: Sendable {
    /// `http(s)://…` with placeholders.
    case http(URLTemplate)
    /// `s3://BUCKET/KEY-TEMPLATE` on an S3-compatible store, signed with SigV4 (see `S3Target`).
    case s3(S3Target)
    /// `sftp://`, `ftps://` or `ftp://`: a file published under a temporary name, then renamed (see `RemoteFileTarget`).
    case remoteFile(RemoteFileTarget)
}

package enum HTTPMethod: String, Sendable, CaseIterable {
    case put = "PUT", post = "POST"
    /// Only for the protocols' own requests (S3's ListParts and AbortMultipartUpload, tus's
    /// HEAD, PATCH, DELETE and OPTIONS, WebDAV's MKCOL); never a `method` in the config.
    case get = "GET", delete = "DELETE", head = "HEAD", patch = "PATCH", options = "OPTIONS", mkcol = "MKCOL"

    /// What `method =` accepts.
    package static var allCases: [HTTPMethod] { [.put, .post] }
}
/// How a file goes over HTTP: one request (`http`) or the tus 1.0 resumable protocol (`tus`).
package enum UploadProtocol: String, Sendable, CaseIterable { case http, tus }
package enum BodyFormat: String, Sendable, CaseIterable { case raw, multipart, json }
package enum DigestMode: String, Sendable, CaseIterable { case sha256, none }
/// `after_send`: `keep` leaves a delivered file and its manifest in sent/ (for `keep_sent` and
/// `keep_sent_bytes` to prune); `delete` removes both once the move and the `on_sent` hook are done.
package enum AfterSend: String, Sendable, CaseIterable { case keep, delete }

/// A `form.NAME` or `header.NAME` entry whose value is a template.
package struct TemplatedField: Sendable {
    package var name: String
    package var value: Template

    package init(name: String, value: Template) {
        self.name = name
        self.value = value
    }
}

/// A secret given inline (often `${VAR}`) or read from a file; never printed.
package struct Secret: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The secret itself, already resolved (file read, one trailing newline stripped).
    package var value: String
    /// The `*_file` path it came from, if any (not secret; shown by check-config).
    package var file: String?

    package init(value: String, file: String? = nil) {
        self.value = value
        self.file = file
    }

    package var description: String { "<redacted>" }
    package var debugDescription: String { "<redacted>" }
}

package enum Auth: Sendable {
    case none
    case basic(username: String, password: Secret)
    case bearer(token: Secret)

    /// Every secret value this auth holds, so logs and outputs can be scrubbed of them.
    package var secrets: [String] {
        switch self {
        case .none: return []
        case .basic(let username, let password):
            // The header carries base64("user:password"): that form is as secret as the password.
            return [password.value, Data("\(username):\(password.value)".utf8).base64EncodedString()]
        case .bearer(let token): return [token.value]
        }
    }
}

package struct TLSOptions: Sendable, Equatable {
    package var caFile: String? = nil
    package var clientCert: String? = nil
    package var clientKey: String? = nil
    package var insecureSkipVerify: Bool = false

    package init() {}
}

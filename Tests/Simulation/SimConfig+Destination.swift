import UploaderSupport
import UploaderConfig

/// The destination protocol a schedule draws: plain HTTP PUT, S3 (a single PUT or multipart),
/// tus, or SFTP. Each is written as `uploader.conf` lines for production's loader; `SimTransport`
/// answers as a server that speaks it (`SimS3Server`, `SimTusServer`, `SimSFTPServer`, the last
/// reached through `SimRemoteFileSession`).
enum SimDestination: String, CaseIterable, Sendable {
    case http, s3, tus, sftp

    /// Plain HTTP in half the schedules (a draw of 0, what shrinking writes, is plain HTTP), each
    /// other protocol in about one in six.
    static let weights = [50, 17, 17, 16]

    /// The simulator's files are bytes where production's are megabytes: the loader's sizes
    /// (at least 5 MiB for an S3 part or threshold, 64 KiB for a tus chunk) are divided by
    /// these after loading, so a file of a few hundred bytes has several parts or chunks.
    static let s3Scale: Int64 = 1 << 16
    static let tusScale: Int64 = 1 << 10

    /// The creation endpoint of tus, and the endpoint of S3 (path style).
    static let origin = "http://127.0.0.1:9"
    static let bucket = "sim-bucket"
    /// The SFTP server: its URLs as `CurlRemoteFileSession` writes them.
    static let sftpOrigin = "sftp://sim@127.0.0.1:9"
    /// The header S3 requests that name an object carry with the manifest's id (`header.*`, as
    /// an operator may set one), which is how the simulated store tells uploads apart.
    static let s3IDHeader = "x-amz-meta-upload-id"

    /// The lines of this destination, drawn.
    func lines(_ choices: ChoiceSource) -> [String] {
        switch self {
        case .http:
            return ["url = \(Self.origin)/{path}"]
        case .s3:
            // Scaled: a threshold of 80–128 B and parts of 80–112 B, one to four parts at once.
            return ["url = s3://\(Self.bucket)/{path}", "s3_endpoint = \(Self.origin)", "access_key_id = SIMKEY",
                    "secret_access_key = sim-secret", "header.\(Self.s3IDHeader) = {id}",
                    "multipart_threshold = \(5 + choices.below(4))MiB", "part_size = \(5 + choices.below(3))MiB",
                    "part_concurrency = \(1 + choices.below(4))"]
        case .tus:
            // Scaled: chunks of 64–256 B.
            return ["url = \(Self.origin)/files/", "protocol = tus", "tus_chunk_size = \(64 * (1 + choices.below(4)))KiB"]
        case .sftp:
            return ["url = \(Self.sftpOrigin)/drop/{path}", "password = sim-secret", "host_key_sha256 = \(String(repeating: "A", count: 43))"]
        }
    }

    /// The profile as the simulator runs it: the loader's, with sizes scaled (`s3Scale`, `tusScale`).
    func scaled(_ profile: Profile) -> Profile {
        var profile = profile
        switch self {
        case .http, .sftp:
            break
        case .s3:
            guard case .s3(var target) = profile.destination else { fatalError("an s3:// url loaded as \(profile.destination)") }
            target.multipartThreshold /= Self.s3Scale
            target.partSize /= Self.s3Scale
            profile.destination = .s3(target)
        case .tus:
            profile.tusChunkSize /= Self.tusScale
        }
        return profile
    }
}

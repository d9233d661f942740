import Foundation
import UploaderSupport

/// The `protocol` and `tus_chunk_size` keys and their rules (DESIGN §10), shared by the
/// builder, `ConfigKeys` and check-config.
package enum TusSettings {
    static let keys = ["protocol", "tus_chunk_size"]

    package static let defaultChunkSize: Int64 = 8 << 20
    /// Smaller chunks only add round trips; larger ones than this are one PATCH a server may refuse.
    static let chunkSizes: ClosedRange<Int64> = (64 << 10)...(4 << 30)

    /// Keys whose meaning tus fixes itself: POST to create, PATCH with the file's raw bytes.
    static let httpOnlyKeys = ["method", "body", "multipart_field"]

    /// Headers the protocol sets; `header.*` may not.
    static let reservedHeaders: Set<String> = [
        "tus-resumable", "upload-length", "upload-metadata", "upload-offset", "upload-checksum", "content-type",
    ]
}

extension ProfileBuilder {
    /// Reads `protocol` and `tus_chunk_size` into `profile`, reporting keys that do not fit the protocol.
    mutating func readProtocol(into profile: inout Profile, isS3: Bool) {
        profile.uploadProtocol = reader.choice("protocol", default: UploadProtocol.http)
        guard profile.uploadProtocol == .tus else {
            if reader.entry("tus_chunk_size") != nil {
                reader.diagnostics.error(reader.line("tus_chunk_size"), "tus_chunk_size is set but protocol is http; it is only used with protocol = tus")
            }
            return
        }
        // s3:// urls report `protocol` with their own fixed values (S3Settings.fixedValues).
        guard !isS3 else { return }
        for key in TusSettings.httpOnlyKeys where reader.entry(key) != nil {
            reader.diagnostics.error(reader.line(key), "\(key) is not used with protocol = tus (tus creates with POST and sends the file's bytes in PATCHes)")
        }
        for entry in reader.section.entries where entry.key.hasPrefix("form.") {
            reader.diagnostics.error(entry.line, "\(entry.key) is not used with protocol = tus")
        }
        for entry in reader.section.entries where entry.key.hasPrefix("header.")
            && TusSettings.reservedHeaders.contains(entry.key.dropFirst(7).lowercased()) {
            reader.diagnostics.error(entry.line, "\(entry.key) cannot be set with protocol = tus: uploader sets \(entry.key.dropFirst(7)) itself")
        }
        profile.tusChunkSize = reader.size("tus_chunk_size", default: TusSettings.defaultChunkSize, in: TusSettings.chunkSizes)
    }
}

import Foundation
import UploaderSupport
import UploaderConfig

/// A destination protocol (plain HTTP, S3, tus): how one attempt carries a claimed file to
/// the profile's destination. The runner calls this and nothing else, so it never knows
/// which protocol runs; `DestinationFactory` chooses the conformance once per profile.
///
/// One call is one attempt (DESIGN §1), whatever sequence of requests it takes: it answers with
/// the result and `Disposition` of the attempt, and never retries on its own — a retry is the
/// core's, counted against `max_attempts`. What lets a later attempt resume goes into the
/// manifest through `DestinationUpload.resume` as the upload goes on.
package protocol UploadDestination: Sendable {
    func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome
}

/// One attempt's inputs: the file, its template values, the request `RequestBuilder` made for
/// it (its URL, headers and body for plain HTTP; for every protocol its cancellation flag, rate
/// limiter and progress callback) and the manifest's record of the upload so far.
package struct DestinationUpload {
    package var source: UploadSource
    package var values: TemplateValues
    package var request: UploadRequest
    package var resume: ResumeRecord

    package init(source: UploadSource, values: TemplateValues, request: UploadRequest, resume: ResumeRecord) {
        self.source = source
        self.values = values
        self.request = request
        self.resume = resume
    }
}

/// The manifest as a destination sees it during an attempt: `saved`, as the attempt began (what
/// earlier attempts recorded, to resume), and `keep`, which applies an edit to the file's
/// manifest and writes it durably before the upload goes on (`what` names the upload in the
/// warning a failed write logs). The destination never writes a manifest itself.
package struct ResumeRecord {
    package let saved: Manifest
    package let keep: (_ what: String, _ edit: (inout Manifest) -> Void) -> Void

    package init(saved: Manifest, keep: @escaping (_ what: String, _ edit: (inout Manifest) -> Void) -> Void) {
        self.saved = saved
        self.keep = keep
    }
}

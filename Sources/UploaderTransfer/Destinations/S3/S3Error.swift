import Foundation
import UploaderSupport
import UploaderConfig

/// An S3 error answer (`<Error><Code>…</Code><Message>…</Message><RequestId>…</RequestId></Error>`)
/// and what it means for the file: the one place S3 codes are sorted into dispositions.
package struct S3Error: Sendable, Equatable {
    package var status: Int
    package var code: String
    package var message: String
    package var requestID: String?

    /// Codes worth trying again after a backoff.
    static let retryableCodes: Set<String> = [
        "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "OperationAborted",
        "RequestTimeTooSkewed", "Throttling", "ThrottlingException",
    ]

    /// Codes that refuse our credentials rather than the file (DESIGN §12 "Rejected").
    static let credentialCodes: Set<String> = ["InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "AccessDenied"]

    /// What to check, for the codes that are a configuration problem.
    static let hints: [String: String] = [
        "AccessDenied": "check that access_key_id may s3:PutObject (and for multipart s3:AbortMultipartUpload, s3:ListMultipartUploadParts) on this bucket and key",
        "NoSuchBucket": "check the bucket name in url, and s3_endpoint / s3_region",
        "InvalidAccessKeyId": "check access_key_id (and that s3_endpoint is the store the key belongs to)",
        "SignatureDoesNotMatch": "check secret_access_key, and that s3_endpoint, s3_region and s3_path_style match the store",
        "AuthorizationHeaderMalformed": "check s3_region: it must be the bucket's region",
        "PermanentRedirect": "the bucket is in another region or endpoint: check s3_region and s3_endpoint",
        "ExpiredToken": "the session token expired: refresh session_token_file",
        "InvalidToken": "check session_token_file",
        "InvalidStorageClass": "check storage_class",
        "RequestTimeTooSkewed": "check this machine's clock (NTP)",
        "EntityTooLarge": "lower multipart_threshold: single PUTs are limited to 5 GiB",
    ]

    /// Parses an error body; nil when it holds no S3 error document.
    package init?(status: Int, body: String) {
        guard body.contains("<Error"), let xml = S3XML(body), xml.root == "Error", let code = xml.first("Code") else { return nil }
        self.status = status
        self.code = code
        message = xml.first("Message") ?? ""
        requestID = xml.first("RequestId")
    }

    package init(status: Int, code: String, message: String, requestID: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.requestID = requestID
    }

    package var isRetryable: Bool {
        Self.retryableCodes.contains(code) || status == 408 || status == 429 || (500...599).contains(status)
    }

    /// Our credentials were refused: one of the credential codes, or any other code that is not
    /// worth a retry sent with 401 or 403 (as for any destination).
    package var refusesCredentials: Bool {
        !isRetryable && (Self.credentialCodes.contains(code) || status == 401 || status == 403)
    }

    /// `S3 SignatureDoesNotMatch (HTTP 403): The request signature… [request id X]; check secret_access_key, …`
    package var description: String {
        var text = "S3 \(code) (HTTP \(status))"
        if !message.isEmpty { text += ": \(message)" }
        if let requestID, !requestID.isEmpty { text += " [request id \(requestID)]" }
        if let hint = Self.hints[code] { text += "; \(hint)" }
        return text
    }

    /// The disposition for an S3 answer: nil when it is a success; otherwise retry or give up,
    /// by the error code when the body has one, else by the HTTP status as for any destination.
    package static func disposition(for response: UploadResponse, now: Date) -> Disposition? {
        let error = S3Error(status: response.status, body: response.body)
        if (200...299).contains(response.status) {
            // CompleteMultipartUpload can fail after its 200 has been sent: the error is in the body.
            guard let error else { return nil }
            if error.refusesCredentials { return .rejected(reason: error.description) }
            return error.isRetryable ? .retryLater(reason: error.description, retryAfter: nil) : .permanent(reason: error.description)
        }
        guard let error else { return Disposition.decide(.success(response), now: now) }
        if error.isRetryable {
            return .retryLater(reason: error.description, retryAfter: response.retryAfter.flatMap { RetryAfter.parse($0, now: now) })
        }
        if error.refusesCredentials { return .rejected(reason: error.description) }
        return .permanent(reason: error.description)
    }
}

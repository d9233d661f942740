import Foundation
import UploaderSupport
import UploaderConfig

/// Plain HTTP: the attempt is the one request `RequestBuilder` made (PUT or POST; raw,
/// multipart or JSON body). A PUT answered 409 makes the WebDAV collections it needs and is
/// sent once more, within the attempt (`WebDAVCollections`).
struct HTTPDestination: UploadDestination {
    /// Nil unless the profile sends plain PUTs.
    let webdav: WebDAVCollections?
    let redactor: SecretRedactor
    /// Dates a Retry-After.
    let clock: any Clock

    init(profile: Profile, known: KnownCollections, clock: any Clock) {
        webdav = WebDAVCollections(profile: profile, known: known)
        redactor = SecretRedactor(secrets: profile.secretValues)
        self.clock = clock
    }

    func send(_ upload: DestinationUpload, over transport: any Transport) -> UploadOutcome {
        let sent = webdav?.send(upload.request, over: transport) ?? transport.send(upload.request)
        // The disposition quotes the answer: decided on it once its echoed secrets are gone.
        let result = redactor.redact(sent)
        return (result, Disposition.decide(result, now: clock.now))
    }
}

/// The version sent in `User-Agent` and shown by `uploader --version`.
package enum UploaderVersion {
    package static let string = "0.1.0"
}

import UploaderSupport
import UploaderConfig

extension TCPProbe {
    /// Probes the host requests to this bucket go to (the bucket's virtual host, or the endpoint).
    package init(s3 target: S3Target, timeout: Double) {
        let host = target.pathStyle ? target.endpoint.host : "\(target.bucket).\(target.endpoint.host)"
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        self.init(host: bare, port: UInt16(clamping: target.endpoint.port ?? target.endpoint.defaultPort), timeout: timeout)
    }
}

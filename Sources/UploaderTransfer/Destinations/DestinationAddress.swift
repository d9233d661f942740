import Foundation
import UploaderSupport
import UploaderConfig

/// Where a profile's destination is, in the terms code outside this folder needs: the URL a
/// file's request goes to (`RequestBuilder`), the origin a proxy probe asks and the host a direct
/// probe connects to (`ReachabilityPlan`). The one other place besides `DestinationFactory` that
/// reads `Profile.destination`, so a new kind of destination adds its case here, not there.
package enum DestinationAddress {
    /// The URL of the request that carries the file with these template values.
    package static func url(of profile: Profile, values: TemplateValues) -> String {
        switch profile.destination {
        case .http(let template): template.render(values)
        case .s3(let target): target.url(path: target.objectPath(target.key(values)), query: "")
        case .remoteFile(let target): CurlRemoteFileSession.url(target, RemoteFileNames(target: target, values: values).final)
        }
    }

    /// `scheme://authority/` of the destination, nil when it cannot be told.
    package static func origin(of profile: Profile) -> String? {
        switch profile.destination {
        case .http(let template): ReachabilityPlan.origin(ofURL: template.description)
        case .s3(let target): target.url(path: "/", query: "")
        // No proxy route: these protocols always go direct.
        case .remoteFile: nil
        }
    }

    /// A TCP connect to the destination's host and port, for a profile whose requests go direct.
    package static func directProbe(of profile: Profile) -> TCPProbe? {
        switch profile.destination {
        case .http(let template): TCPProbe(urlTemplate: template.description, timeout: profile.connectTimeout)
        case .s3(let target): TCPProbe(s3: target, timeout: profile.connectTimeout)
        case .remoteFile(let target): TCPProbe(host: target.bareHost, port: UInt16(clamping: target.port), timeout: profile.connectTimeout)
        }
    }
}

import UploaderSupport

extension Configuration {
    /// Every secret value in the configuration, so the logger can scrub them from any output.
    package var secretValues: [String] {
        var seen = Set<String>()
        return profiles.flatMap(\.secretValues).filter { seen.insert($0).inserted }
    }
}

extension Profile {
    /// This profile's secrets: its auth credentials, the values of credential headers and the
    /// credentials in its proxy's URL.
    package var secretValues: [String] {
        let headerValues = headers.filter { ConfigKeys.isSensitiveHeader($0.name) }.map(\.value.source)
        return (auth.secrets + headerValues + destination.secrets + (proxy?.secrets ?? [])).filter { !$0.isEmpty }
    }
}

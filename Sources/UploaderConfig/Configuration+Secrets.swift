import UploaderSupport

extension Configuration {
    /// Every secret value in the configuration, so the logger can scrub them from any output.
    package var secretValues: [String] {
        var seen = Set<String>()
        return profiles.flatMap(\.secretValues).filter { seen.insert($0).inserted }
    }
}

extension Profile {
    /// The files this profile's credentials are read from (`token_file`, `password_file`,
    /// `secret_access_key_file`, `session_token_file`): a change to one may end a refusal.
    package var credentialFiles: [String] {
        var secrets: [Secret] = []
        switch auth {
        case .none: break
        case .basic(_, let password): secrets.append(password)
        case .bearer(let token): secrets.append(token)
        }
        if case .s3(let target) = destination {
            secrets.append(target.secretAccessKey)
            if let token = target.sessionToken { secrets.append(token) }
        }
        if case .remoteFile(let target) = destination { return secrets.compactMap(\.file) + target.credentialFiles }
        return secrets.compactMap(\.file)
    }

    /// This profile's secrets: its auth credentials, the values of credential headers and the
    /// credentials in its proxy's URL.
    package var secretValues: [String] {
        let headerValues = headers.filter { ConfigKeys.isSensitiveHeader($0.name) }.map(\.value.source)
        return (auth.secrets + headerValues + destination.secrets + (proxy?.secrets ?? [])).filter { !$0.isEmpty }
    }
}

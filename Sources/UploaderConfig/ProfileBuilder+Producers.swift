import UploaderSupport

extension ProfileBuilder {
    /// `producers = GROUP`: a group that exists on this machine (its outbox becomes `2770 service:GROUP`).
    mutating func producersGroup() -> String? {
        guard let name = reader.text("producers"), !name.isEmpty else { return nil }
        guard !name.utf8.contains(0), LocalUser.groupID(named: name) != nil else {
            reader.diagnostics.error(reader.line("producers"),
                "producers group \(quotedForMessage(name, limit: 64)) does not exist on this machine; create it (groupadd \(name)) or name the drop group producers join")
            return nil
        }
        return name
    }
}

import UploaderSupport

/// The config file as sections of `key = value` entries, before any key has a meaning.
struct IniDocument {
    var global: IniSection?
    var profiles: [IniSection] = []
}

/// One `[uploader]` or `[outbox NAME]` section, with the line of its header.
struct IniSection {
    enum Kind: Equatable {
        case global
        case outbox(name: String)
    }

    var kind: Kind
    var line: Int
    var entries: [IniEntry] = []

    /// How messages name the section: `[uploader]` or `[outbox photos]`.
    var title: String {
        switch kind {
        case .global: return "[uploader]"
        case .outbox(let name): return "[outbox \(name)]"
        }
    }
}

/// One `key = value` line, its value unquoted and `${VAR}`-expanded.
struct IniEntry {
    var key: String
    var value: String
    var line: Int
    /// False when the value could not be read (bad quoting, unset variable): already reported,
    /// so later stages treat the key as present but skip checking it.
    var isValid: Bool
    /// For messages: the value as written, `${VAR}` unexpanded, when it used the environment
    /// (a variable may hold a secret even when the key is not a secret key); nil otherwise.
    var asWritten: String? = nil

    /// What a message may show of the value.
    var shown: String { asWritten ?? value }
}

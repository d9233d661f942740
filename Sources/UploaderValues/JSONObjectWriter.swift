/// Builds one compact JSON object by hand, fields in the order written, `null` for nil.
///
/// Manifests are written twice per file; Foundation's `JSONEncoder` was a measurable share
/// of the CPU per small file (bench/ANALYSIS.md), and this keeps the contract's key order too.
package struct JSONObjectWriter {
    private var bytes: [UInt8]
    private var empty = true

    package init() {
        bytes = [UInt8(ascii: "{")]
        bytes.reserveCapacity(512)
    }

    private mutating func key(_ name: String) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        JSONText.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func null() { bytes += "null".utf8 }

    package mutating func field(_ name: String, _ value: String?) {
        key(name)
        if let value { JSONText.appendQuoted(value, to: &bytes) } else { null() }
    }

    package mutating func field<T: BinaryInteger>(_ name: String, _ value: T?) {
        key(name)
        if let value { JSONText.appendDecimal(value, to: &bytes) } else { null() }
    }

    package mutating func field(_ name: String, _ value: Bool?) {
        key(name)
        if let value { bytes += (value ? "true" : "false").utf8 } else { null() }
    }

    package mutating func field(_ name: String, object: JSONObjectWriter?) {
        key(name)
        if let object { append(object) } else { null() }
    }

    package mutating func field(_ name: String, array: [JSONObjectWriter]) {
        key(name)
        bytes.append(UInt8(ascii: "["))
        for (index, element) in array.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            append(element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A value already encoded as JSON.
    package mutating func field(_ name: String, json: [UInt8]) {
        key(name)
        bytes += json
    }

    private mutating func append(_ object: JSONObjectWriter) {
        bytes += object.bytes
        bytes.append(UInt8(ascii: "}"))
    }

    /// The object's text as one line: closing brace and newline included.
    package consuming func finishedLine() -> [UInt8] {
        bytes += [UInt8(ascii: "}"), UInt8(ascii: "\n")]
        return bytes
    }
}

import Foundation
#if canImport(FoundationXML)
import FoundationXML
import UploaderSupport
import UploaderConfig
#endif

/// A flat reading of a small S3 XML answer (errors, InitiateMultipartUploadResult,
/// ListPartsResult, CompleteMultipartUploadResult) through Foundation's `XMLParser`.
package struct S3XML: Sendable {
    /// The root element's name (`Error`, `ListPartsResult`, …).
    package var root: String
    /// Leaf elements' texts by their path below the root (`UploadId`, `Part/ETag`), in document order.
    package var leaves: [(path: String, text: String)]

    /// Nil when `text` is not well-formed XML.
    package init?(_ text: String) {
        let collector = Collector()
        let parser = XMLParser(data: Data(text.utf8))
        parser.delegate = collector
        guard parser.parse(), let root = collector.root else { return nil }
        self.root = root
        leaves = collector.leaves
    }

    /// The first text at `path` (e.g. `UploadId`, `Code`).
    package func first(_ path: String) -> String? { leaves.first { $0.path == path }?.text }

    /// One dictionary per repeated `element` (e.g. `Part`), holding its children's texts.
    package func records(_ element: String) -> [[String: String]] {
        var out: [[String: String]] = []
        let prefix = element + "/"
        var current: [String: String] = [:]
        for leaf in leaves where leaf.path.hasPrefix(prefix) {
            let name = String(leaf.path.dropFirst(prefix.count))
            if current[name] != nil {
                out.append(current)
                current = [:]
            }
            current[name] = leaf.text
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    private final class Collector: NSObject, XMLParserDelegate {
        var root: String?
        var stack: [String] = []
        var text = ""
        var leaves: [(path: String, text: String)] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if root == nil { root = name } else { stack.append(name) }
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if !stack.isEmpty {
                leaves.append((stack.joined(separator: "/"), text))
                stack.removeLast()
            }
            text = ""
        }
    }
}

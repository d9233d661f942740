/// `order`: by modification time (ties by name) or by size.
package enum UploadOrder: String, Sendable, CaseIterable { case oldest, newest, smallest, largest }

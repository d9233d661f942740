import Foundation
import Testing
@testable import UploaderSupport

/// A path's parts (name, parent, hidden components) and order, computed on its bytes.
@Suite struct RelativePathPartsTests {
    /// `name`, `parent` and `hasHiddenComponent` agree with what `components` says, for clean
    /// and untidy paths alike.
    @Test func nameParentAndHiddenAgreeWithComponents() {
        let paths = ["a", "a/b", "sub/dir/a.txt", "a//b", "/a/b", "a/b/", "a/b//", "//", "", "/", ".hidden", "d/.h/x",
                     "d/x.", "a/./b", "ü/ñ/é.bin", "x/y//z/"]
        for text in paths {
            let path = RelativePath(text)
            let parts = path.components
            #expect(path.name == RelativePath(bytes: parts.last ?? []), "\(text)")
            let parent = parts.count > 1 ? RelativePath(bytes: Array(parts.dropLast().joined(separator: [UInt8(ascii: "/")]))) : nil
            #expect(path.parent == parent, "\(text)")
            #expect(path.hasHiddenComponent == parts.contains { $0.first == UInt8(ascii: ".") }, "\(text)")
        }
    }

    /// Sorting by `<` is byte order, as `lexicographicallyPrecedes` says, non-UTF-8 bytes included.
    @Test func orderIsByteOrder() {
        let paths: [RelativePath] = ["", "a", "a/b", "ab", "b", "a\u{0}", "é", "z", "A", "a.1", "a.10", "a.2"].map(RelativePath.init)
            + [RelativePath(bytes: [0xFF]), RelativePath(bytes: [0x61, 0xFE]), RelativePath(bytes: [0x61])]
        for x in paths {
            for y in paths { #expect((x < y) == x.bytes.lexicographicallyPrecedes(y.bytes), "\(x.bytes) < \(y.bytes)") }
        }
    }
}

/// A first-in, first-out line of values kept in one array: taking the first moves an index, and
/// the array is emptied (its storage kept) once everything is taken. What a monitor's state holds
/// for a queue of jobs or messages: no allocation per value once warm.
///
/// Public and inlinable, as `Monitor` is, so that the modules using it get it specialized.
public struct FirstInLine<Element: Sendable>: Sendable {
    @usableFromInline var items: [Element] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { head >= items.count }

    @inlinable public mutating func append(_ item: Element) { items.append(item) }

    /// The first value, taken out of the line; nil when the line is empty.
    @inlinable public mutating func takeFirst() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }
}

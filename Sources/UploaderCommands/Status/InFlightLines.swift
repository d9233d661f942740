import UploaderSpool

/// Plain `status`'s line per upload in flight, under `uploading`, fitted to 80 columns:
///
///     holiday-video.mp4   12%   2.4 MiB of 20.0 MiB  512.0 KiB/s  ETA 36s
///
/// Name, percent, bytes sent of size, rate, ETA, each column as wide as its widest cell; the
/// name takes what is left and a long one loses its middle (`IMG_2026…123.jpg`), so both its
/// start and its extension stay readable.
enum InFlightLines {
    static let width = 80
    static let indent = "    "
    static let gap = "  "
    /// A name never gets fewer columns than this, even if a line then runs past `width`.
    static let narrowestName = 12

    static func lines(_ files: [InFlightFile]) -> [String] {
        guard !files.isEmpty else { return [] }
        let rows = files.map { file in (name: printable(file.path), cells: cells(file)) }
        let columns = (0..<4).map { i in rows.map { $0.cells[i].count }.max() ?? 0 }
        let stats = columns.reduce(0, +) + gap.count * columns.count
        let room = max(narrowestName, width - indent.count - stats)
        let nameWidth = min(room, rows.map(\.name.count).max() ?? 0)
        return rows.map { row in
            let name = shortened(row.name, to: nameWidth)
            var line = indent + name + String(repeating: " ", count: nameWidth - name.count)
            for (i, cell) in row.cells.enumerated() {
                let pad = String(repeating: " ", count: columns[i] - cell.count)
                // The ETA reads from the left; the numbers line up on the right.
                line += gap + (i == 3 ? cell + pad : pad + cell)
            }
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }
    }

    /// Percent (never 100% before the last byte), sent of size, rate, ETA.
    static func cells(_ file: InFlightFile) -> [String] {
        let percent = file.size > 0 ? min(100, file.bytesSent * 100 / file.size) : 100
        return ["\(percent)%",
                "\(ByteCount.format(file.bytesSent)) of \(ByteCount.format(file.size))",
                "\(ByteCount.format(file.rateBytesPerSecond))/s",
                "ETA " + (file.etaSeconds.map { ByteCount.duration(Double($0)) } ?? "--")]
    }

    /// `name` cut to `width` characters by taking out its middle (`…` in its place).
    static func shortened(_ name: String, to width: Int) -> String {
        guard name.count > width else { return name }
        guard width > 1 else { return String(name.prefix(width)) }
        let tail = (width - 1) / 2
        return String(name.prefix(width - 1 - tail)) + "…" + String(name.suffix(tail))
    }

    /// Control characters (a newline in a file name) would break the table: shown as `?`.
    static func printable(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}

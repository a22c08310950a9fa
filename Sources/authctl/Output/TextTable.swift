/// Rows printed as aligned columns for people. Widths and padding count characters (not UTF-16
/// units), so no cell is cut short; trailing spaces are dropped.
enum TextTable {
    static func lines(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0 }
        return rows.map { row in
            var line = zip(row, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                .joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}

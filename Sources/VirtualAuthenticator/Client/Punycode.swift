/// Punycode (RFC 3492), decoding only: turns an IDNA A-label (`xn--55qx5d`) back into Unicode so
/// it can be compared with the Public Suffix List's rules, which are written in Unicode.
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700

    /// The Unicode form of an `xn--` label; `nil` if the label is not one or does not decode.
    static func decodeLabel(_ label: String) -> String? {
        guard label.hasPrefix("xn--") else { return nil }
        let encoded = Array(label.dropFirst(4).unicodeScalars)
        var output: [Unicode.Scalar] = []
        var rest = encoded[...]
        if let dash = encoded.lastIndex(of: "-") {
            output = Array(encoded[..<dash])
            guard output.allSatisfy(\.isASCII) else { return nil }
            rest = encoded[(dash + 1)...]
        }
        var n = 128, i = 0, bias = 72
        var iterator = rest.makeIterator()
        var pending = iterator.next()
        while pending != nil {
            let oldI = i
            var weight = 1
            var k = base
            while true {
                guard let c = pending, let digit = digitValue(c) else { return nil }
                pending = iterator.next()
                guard digit <= (Int.max - i) / weight else { return nil }
                i += digit * weight
                let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                if digit < t { break }
                guard pending != nil else { return nil }
                weight *= base - t
                k += base
            }
            bias = adapt(i - oldI, output.count + 1, first: oldI == 0)
            let (next, overflow) = n.addingReportingOverflow(i / (output.count + 1))
            guard !overflow, next <= 0x10FFFF else { return nil }
            n = next
            i %= output.count + 1
            guard let scalar = Unicode.Scalar(UInt32(clamping: n)) else { return nil }
            output.insert(scalar, at: i)
            i += 1
        }
        var text = ""
        text.unicodeScalars.append(contentsOf: output)
        return text
    }

    private static func digitValue(_ c: Unicode.Scalar) -> Int? {
        switch c.value {
        case 0x61...0x7A: Int(c.value - 0x61)  // a–z: 0–25
        case 0x41...0x5A: Int(c.value - 0x41)
        case 0x30...0x39: Int(c.value - 0x30) + 26  // 0–9: 26–35
        default: nil
        }
    }

    private static func adapt(_ delta: Int, _ points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}

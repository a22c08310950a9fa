import CIDN2

/// Internationalized domain names through libidn2: the URL Standard's "domain to ASCII" (UTS #46
/// mapping, non-transitional, as browsers apply it), so `bücher.example` becomes the A-label form
/// `xn--bcher-kva.example` that goes into clientDataJSON and the RP ID hash.
enum IDNA {
    /// The ASCII form of `host`: Unicode labels mapped and Punycode-encoded, ASCII lower-cased.
    /// A refusal, with libidn2's reason, when the name is not a valid IDN.
    static func toASCII(_ host: String) -> Result<String, Refusal> {
        var output: UnsafeMutablePointer<CChar>? = nil
        let rc = host.withCString { idn2_to_ascii_8z($0, &output, authctl_idn2_flags) }
        defer { authctl_idn2_free(output) }
        guard rc == IDN2_OK.rawValue, let output else {
            return .failure(Refusal(reason: String(cString: idn2_strerror(rc))))
        }
        return .success(String(cString: output))
    }

    /// Whether an ASCII label that claims to be an A-label (`xn--…`) is one: it must decode, and
    /// encode back to itself (URL Standard "domain to ASCII" fails on bad Punycode such as `xn--a`).
    static func isValidALabel(_ label: Substring) -> Bool {
        guard case .success(let ascii) = toASCII(String(label)) else { return false }
        return ascii == label.lowercased()
    }

    struct Refusal: Error {
        let reason: String
    }
}

import Testing
@testable import Curl

/// Every text the plain-origin reading accepts must split exactly as libcurl splits it; the rest
/// is libcurl's alone.
@Test func plainOriginsSplitAsLibcurlSplitsThem() throws {
    let schemes = ["https://", "http://", "HTTPS://", "Https://", "ftp://", "https:/", "https:", "", "wss://"]
    let hosts = ["example.com", "a", "a.b", "x-y.z9", "login.bank.example", "localhost", "sub.localhost",
                 "127.1", "127.0.0.1", "0x7f.1", "1.2.3.4", "1.com", "a.1b", "a.0x1", "a.0x", "1a.2b", "a.b1",
                 "a..b", "a.", ".a", "", "A.com", "exAmple.com", "b\u{FC}.de", "xn--bcher-kva.example",
                 "a_b.c", "-a.b", "a-.b", "ex%41.com", "a b.c", "[::1]", "u:p@a.b", "u@a.b", "a.b.", "0.a", "a.0"]
    let ports = ["", ":", ":0", ":1", ":80", ":443", ":0443", ":00", ":8080", ":65535", ":65536", ":99999", ":123456", ":8a", ": 1", "::1"]
    let tails = ["", "/", "/p", "?q", "#f", "//", "/?", "\\"]
    var plain = 0
    for scheme in schemes {
        for host in hosts {
            for port in ports {
                for tail in tails {
                    let text = scheme + host + port + tail
                    guard let fast = URLParts.plainOrigin(text) else { continue }
                    plain += 1
                    let curl = try URLParts(libcurl: text)
                    #expect(fast == curl, "\(text): \(fast) vs libcurl's \(curl)")
                    #expect(try URLParts(text) == curl)
                }
            }
        }
    }
    // The common shapes do take the plain reading.
    #expect(plain > 200)
    for text in ["https://example.com", "https://login.bank.example:8443/", "http://localhost:8080", "https://a-b.c9.example"] {
        #expect(URLParts.plainOrigin(text) != nil, "\(text)")
    }
    for text in ["https://127.1", "https://EXAMPLE.com", "https://example.com.", "https://a.b:0443", "https://a.b/p", "https://u@a.b"] {
        #expect(URLParts.plainOrigin(text) == nil, "\(text)")
    }
}

@Test func libcurlStillReadsWhatThePlainReadingLeaves() throws {
    #expect(try URLParts("https://0x7f.1").host == "127.0.0.1")
    #expect(try URLParts("HTTPS://Example.COM:443/path?q#f") == URLParts(libcurl: "https://Example.COM:443/"))
    #expect(try URLParts("https://user:pw@example.com").hasCredentials)
    #expect(throws: URLParts.Refusal.self) { try URLParts("https://example.com:65536") }
}

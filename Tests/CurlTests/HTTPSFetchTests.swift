import Testing
@testable import Curl

/// A fetch speaks HTTPS or nothing: any other scheme is refused before anything is sent.
@Test func anHTTPSFetchRefusesEveryOtherScheme() {
    for url in ["http://127.0.0.1:9/.well-known/apple-app-site-association", "HTTP://example.com/", "ftp://example.com/", "example.com/"] {
        #expect(throws: HTTPSFetch.Failure.notHTTPS, "\(url)") { try HTTPSFetch.get(HTTPSFetch.Request(url: url, limit: 1024)) }
    }
}

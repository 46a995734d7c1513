import Foundation
import Testing
@testable import BTReport

@Suite("SARIF artifact URIs")
struct AuditSARIFTests {
    @Test("paths become URI references: unreserved characters and / kept, every other UTF-8 byte percent-encoded",
          arguments: [
              ("samples/wasteful-central.btsnoop", "samples/wasteful-central.btsnoop"),
              ("~user/x_y-z.1.log", "~user/x_y-z.1.log"),
              ("/tmp/a b.btsnoop", "file:///tmp/a%20b.btsnoop"),
              ("caps/café #1?.pcap", "caps/caf%C3%A9%20%231%3F.pcap"),
              ("100%.log", "100%25.log"),
              ("a:b.pcap", "a%3Ab.pcap"),  // not a scheme
              ("[x]+y=z;@!$&'()*,.log", "%5Bx%5D%2By%3Dz%3B%40%21%24%26%27%28%29%2A%2C.log"),
              ("tab\tand\\back\"quote<>|^`{}.log", "tab%09and%5Cback%22quote%3C%3E%7C%5E%60%7B%7D.log"),
              ("/données/🦷.pklg", "file:///donn%C3%A9es/%F0%9F%A6%B7.pklg"),
              ("-", "stdin"),
          ])
    func uri(path: String, expected: String) throws {
        let uri = AuditSARIF.uri(path)
        #expect(uri == expected)
        guard path != "-" else { return }
        // Only characters a URI reference may hold, and the path comes back when the escapes are decoded.
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/%:")
        #expect(uri.allSatisfy { allowed.contains($0) })
        let body = path.hasPrefix("/") ? String(uri.dropFirst("file://".count)) : uri
        #expect(!body.contains(":"))
        #expect(body.removingPercentEncoding == path)
        if path.hasPrefix("/") { #expect(try #require(URL(string: uri)).path == path) }
    }
}

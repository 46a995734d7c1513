import Testing
@testable import BTRules

/// A scan left on for hours outlives thousands of connections: the finding names ten and counts the rest.
@Suite("scan-after-connect: connections named in the finding")
struct ScanAfterConnectListingTests {
    @Test("up to ten connections are all named")
    func few() {
        #expect(ScanAfterConnectRule.listed([4]) == "#4")
        #expect(ScanAfterConnectRule.listed(Array(4...13)) == "#4, #5, #6, #7, #8, #9, #10, #11, #12, #13")
    }

    @Test("past ten, the rest are counted")
    func many() {
        let text = ScanAfterConnectRule.listed(Array(4...31184))
        #expect(text == "#4, #5, #6, #7, #8, #9, #10, #11, #12, #13 and 31171 more")
    }
}

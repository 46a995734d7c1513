import BTCapture
import BTReport
import Testing

/// A corrupt capture's timestamps can be anything: they are clamped so that any two are at most 2⁶³ − 2 ns apart,
/// and the reports print such differences without overflowing (found by the randomly damaged samples of
/// `LinkThreadTests`, which crashed here before).
@Suite("Absurd timestamps")
struct TimeExtremesTests {
    @Test("the difference of the earliest and latest timestamps fits, and prints as seconds")
    func extremes() {
        let earliest = Timestamp(nanoseconds: .min)
        let latest = Timestamp(nanoseconds: .max)
        #expect(latest.nanoseconds == Timestamp.limit && earliest.nanoseconds == -Timestamp.limit)
        #expect(TimeFormat.seconds(latest - earliest) == "9223372036.854775")
        #expect(TimeFormat.seconds(earliest - latest, digits: 3) == "-9223372036.854")
        #expect(TimeFormat.seconds(.milliseconds(1500)) == "1.500000")
    }
}

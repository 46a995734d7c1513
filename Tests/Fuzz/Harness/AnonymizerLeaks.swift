import BTCapture
import BTDecode

/// Which of the identifiers `anonymize --check` finds in a copy were left there: the input held the same bytes at
/// the same place. The anonymizer rewrites in place (same records, same lengths), so each record of the copy
/// lies over the input's record it came from. Bytes the replacements spelled are no leak: a zeroed key or a
/// numbered pseudonym (40:00:00:00:00:02) next to the bytes around it can make a mostly-zero address of fuzzed
/// input, which the check cannot tell from one left in place (the first two inputs the target failed on).
enum AnonymizerLeaks {
    /// One line per identifier left in place: what, in which record of the copy.
    static func find(copy: OpenedCapture, input: UnsafeRawBufferPointer, identifiers: CapturedIdentifiers) -> [String] {
        let scanner = Anonymizer.checkScanner(identifiers)
        let keep = max(0, scanner.longest - 1)
        // The input's records the copier wrote, in order.
        var originals: [[UInt8]] = []
        var debugLog = ControllerDebugLogFilter()
        let source = FramedRecords(input)
        while let record = source.next() {
            guard !debugLog.isDebugLog(record), record.kind.isHCIPacket else { continue }
            originals.append(Array(record.payload))
        }
        var leaks: [String] = []
        var index = 0
        var copyTail: [UInt8] = [], originalTail: [UInt8] = []
        while let record = copy.nextRecord(), index < originals.count {
            let written = Array(record.payload), original = originals[index]
            index += 1
            guard written.count == original.count else { return ["record \(record.number) of the copy is not the input's length"] }
            // As the check and the copier scan: the tail of the record before, then this one (an ACL continuation
            // without its header).
            let skip = record.kind == .acl && written.count >= 4 && written[1] >> 4 & 3 == 1 ? 4 : 0
            let joinedCopy = copyTail.suffix(keep) + written[skip...]
            let joinedOriginal = originalTail.suffix(keep) + original[skip...]
            let carried = min(keep, copyTail.count)
            joinedCopy.withUnsafeBytes { window in
                scanner.matches(in: window, endingAfter: carried) { at, match in
                    // The copy holds the identifier's bytes there: a leak if the input held the same.
                    let found = Array(joinedCopy[joinedCopy.startIndex + at..<joinedCopy.startIndex + at + match.length])
                    if Array(joinedOriginal[joinedOriginal.startIndex + at..<joinedOriginal.startIndex + at + match.length]) == found {
                        leaks.append("\(identifiers.all[match.identifier].description) left in record \(record.number)")
                    }
                }
            }
            copyTail = written
            originalTail = original
        }
        return leaks
    }
}

import Foundation
import BTCapture
import BTTrack
import TestSupport

final class NSLockShim: @unchecked Sendable {
    let inner = NSLock()
    func lock() { inner.lock() }
    func unlock() { inner.unlock() }
}

func trackScenario(_ name: String) throws -> CaptureModel {
    let capture = try OpenedCapture.open(path: try writeScenario(name))
    var collector = TrackingCollector()
    return try capture.accept(&collector)
}

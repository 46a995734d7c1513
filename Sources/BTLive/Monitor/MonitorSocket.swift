#if canImport(Glibc)
import Glibc
#endif
import CBluetooth

/// Opens the Linux HCI monitor channel the way btmon does (BlueZ monitor/control.c `open_socket`): a raw HCI
/// socket bound to no device on HCI_CHANNEL_MONITOR. The kernel then sends a copy of every HCI packet of every
/// controller, and replays NEW_INDEX, INDEX_INFO and OPEN_INDEX for the controllers that already exist.
public enum MonitorSocket {
    /// Returns the bound descriptor, or the error to show (no Bluetooth in the kernel, no permission).
    public static func open() throws(LiveError) -> Int32 {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        guard fd >= 0 else { throw LiveError.opening("socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)", errno: errno) }
        // Kernel receive times, as btmon asks for them; without them frames get the clock at read time.
        var on: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, MonitorFrameReader.timestampOption, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_MONITOR)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else {
            let e = errno
            close(fd)
            throw LiveError.opening("bind(HCI_CHANNEL_MONITOR)", errno: e)
        }
        return fd
    }
}

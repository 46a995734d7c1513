import Testing
import BTWire
import BTTrack

@Suite("Read Local Version Information: the controller's chip")
struct ControllerVersionTests {
    static func version(_ bytes: [UInt8]) -> ControllerVersion? {
        bytes.withUnsafeBytes { ControllerVersion(returnParameters: $0, controller: 0) }
    }

    @Test("decodes every field; a failed or short answer names nothing")
    func decode() throws {
        // Status 0, HCI 5.2 (0x0B), revision 0x20CB, LMP 5.2, Broadcom (0x000F), subversion 0x6209.
        let v = try #require(Self.version([0x00, 0x0B, 0xCB, 0x20, 0x0B, 0x0F, 0x00, 0x09, 0x62]))
        #expect(v.hciVersion == 0x0B && v.hciRevision == 0x20CB && v.lmpVersion == 0x0B)
        #expect(v.manufacturer == 0x000F && v.lmpSubversion == 0x6209)
        #expect(v.description == "Broadcom, Bluetooth 5.2, LMP subversion 25097")
        #expect(Self.version([0x01, 0x0B, 0xCB, 0x20, 0x0B, 0x0F, 0x00, 0x09, 0x62]) == nil)
        #expect(Self.version([0x00, 0x0B, 0xCB, 0x20, 0x0B, 0x0F, 0x00, 0x09]) == nil)
        // A version newer than the table and a company it does not name: their raw values.
        let future = try #require(Self.version([0x00, 0x20, 0, 0, 0x20, 0xFE, 0xFE, 0, 0]))
        #expect(future.coreVersion == "HCI version 0x20")
        #expect(future.manufacturerName.hasPrefix("company 0x") || AssignedNumbers.companyName(0xFEFE) != nil)
    }
}

import ArgumentParser
struct DecodeCommand: ParsableCommand { static let configuration = CommandConfiguration(commandName: "decode"); func run() throws {} }

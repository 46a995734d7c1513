import ArgumentParser
import BTDecode

/// `--anonymize` and `--anonymize-key` on every command that prints: the capture's HCI packets pass through the
/// same rewriting as `btlens anonymize` before anything reads them, so every report is safe to share.
struct AnonymizeOptions: ParsableArguments {
    @Flag(name: .long, help: "Report on an anonymised copy: addresses as stable pseudonyms, names as name-N, data and values and keys replaced (btlens anonymize).")
    var anonymize = false

    @Option(name: .long, help: "Key the pseudonyms (implies --anonymize): the same address gets the same pseudonym in every run.")
    var anonymizeKey: String?

    /// A fresh rewriter for one capture (captures may be read in parallel), or nil when not asked for.
    func makeAnonymizer() -> Anonymizer? {
        anonymize || anonymizeKey != nil ? Anonymizer.setAside(key: anonymizeKey) : nil
    }
}

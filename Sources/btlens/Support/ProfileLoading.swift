import BTEnergy

/// `--profile FILE` of `energy`, `audit` and `diff`: the default profile without one; a file that cannot be read
/// or is not a valid profile is a usage error (exit 2) naming it.
enum ProfileLoading {
    static func energyModel(_ path: String?) throws -> EnergyModel {
        guard let path else { return EnergyModel() }
        do {
            return EnergyModel(profile: try EnergyProfile.load(path: path))
        } catch {
            Diagnostics.error(file: path, "\(error)".replacingOccurrences(of: "\(path): ", with: ""))
            throw ExitStatus.usage
        }
    }
}

/// A count with its noun, for text meant to be read: `1 device`, `3 devices`, `1 entry`, `2 entries`.
public enum Plural {
    /// `plural` defaults to `singular` + "s".
    public static func of(_ n: Int, _ singular: String, plural: String? = nil) -> String {
        String(n) + " " + (n == 1 ? singular : plural ?? singular + "s")
    }
}

/// Why a rank was rejected or could not be generated.
///
/// ``reason`` is a short human-readable sentence, suitable for a 422 response body; it never
/// echoes the offending key, which may be arbitrary client input.
public struct RankError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in one sentence.
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}

/// What a network monitor's reports mean to continuous mode, apart from the
/// platform API that makes them (`NWPathMonitor` in ``NetworkMonitor``, Apple
/// only), so the decision compiles and is tested on every platform.
///
/// The first report is the path as it is when monitoring starts, not a
/// change: it never wakes the engine. After that, only a path that was
/// unusable and becomes usable does; a usable path reported again (its
/// interface or cost changed) does not, nor does losing the path, which the
/// failing requests already show.
struct PathChanges: Sendable, Equatable {
    private var satisfied: Bool?

    init() {}

    /// Takes one report; true when it should wake the engine now.
    mutating func report(satisfied now: Bool) -> Bool {
        defer { satisfied = now }
        return now && satisfied == false
    }
}

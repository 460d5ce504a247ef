import Foundation
import GRDB

/// Who is writing the store now, as the triggers ask it (``LocalTriggers``):
/// FerryKit itself (the engine applying the server's rows, the outbox's own
/// bookkeeping), whose writes are neither checked nor recorded; or the app,
/// in which write group if any.
///
/// Writes are serialized by GRDB, so what one write sets here is seen only by
/// its own statements; the lock is for the functions' other callers (a
/// reader's SELECT may call them too).
///
/// `@unchecked Sendable`: its mutable state is only touched under `lock`
/// (`Synchronization.Mutex` would need macOS 15; FerryKit supports 14).
final class WriteContext: @unchecked Sendable {
    private let lock = NSLock()
    private var internalDepth = 0
    private var group: String?
    private var issued: Set<String> = []

    /// Runs `body` as FerryKit's own write.
    func asFerry<T>(_ body: () throws -> T) rethrows -> T {
        locked { internalDepth += 1 }
        defer { locked { internalDepth -= 1 } }
        return try body()
    }

    /// Runs `body` as the app's write group `id`.
    func inGroup<T>(_ id: String, _ body: () throws -> T) rethrows -> T {
        let outer = locked { () -> String? in
            defer { group = id }
            return group
        }
        defer { locked { group = outer } }
        return try body()
    }

    /// The SQL functions the triggers call, on one connection.
    func register(on db: Database) {
        db.add(
            function: DatabaseFunction("ferry_internal", argumentCount: 0, pure: false) { [self] _ in
                locked { internalDepth > 0 }
            })
        db.add(
            function: DatabaseFunction("ferry_group", argumentCount: 0, pure: false) { [self] _ in
                locked { group }
            })
        db.add(
            function: DatabaseFunction("ferry_op_id", argumentCount: 0, pure: false) { [self] _ in
                let id = UUID().uuidString.lowercased()
                locked { _ = issued.insert(id) }
                return id
            })
        db.add(
            function: DatabaseFunction("ferry_issued", argumentCount: 1, pure: false) { [self] arguments in
                guard let id = String.fromDatabaseValue(arguments[0]) else { return false }
                return locked { issued.remove(id) != nil }
            })
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

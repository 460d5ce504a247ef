import Foundation
import Synchronization

/// Runs `body(index)` on `count` new threads (blocking work, like Ferry's workers) and
/// waits for all of them; returns false if they did not all finish within `timeout`.
func runOnThreads(_ count: Int, timeout: Duration, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    return group.wait(timeout: .now() + seconds) == .success
}

/// A thread-safe list to gather observations from many threads.
final class Collector<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var all: [Element] { storage.withLock { $0 } }
}

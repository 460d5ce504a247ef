// One URLSession dataTask (Ferry's JWKS fetch until issue 51) against a provider that never answers, 3 s timeout: its CPU (bench/auth/jwks-spin.sh).
import Foundation
import FoundationNetworking
func cpu() -> Double {
    var u = rusage(); getrusage(RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
}
let session = URLSession(configuration: .ephemeral)
let done = DispatchSemaphore(value: 0)
let start = cpu()
session.dataTask(with: URLRequest(url: URL(string: CommandLine.arguments[1])!, timeoutInterval: 3)) { _, _, error in
    print("error: \(error.map { "\($0)" } ?? "none")"); done.signal()
}.resume()
done.wait()
print(String(format: "%.3f s CPU in a 3 s hanging fetch", cpu() - start))

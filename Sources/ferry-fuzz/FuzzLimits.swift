import FerryHTTP

extension HTTPLimits {
    /// Limits small enough that short inputs reach every one of them.
    static let fuzz: HTTPLimits = {
        var limits = HTTPLimits()
        limits.maxRequestLineBytes = 200
        limits.maxHeaderBytes = 400
        limits.maxHeaderCount = 12
        limits.maxBodyBytes = 600
        return limits
    }()
}

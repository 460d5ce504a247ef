/// The headers on every console answer, pages and API alike.
///
/// `Content-Security-Policy`: scripts, styles, images and requests from this
/// origin only; no inline script or style, no `eval`, no plugins, no forms
/// posted elsewhere, no framing (`frame-ancestors 'none'`, and
/// `X-Frame-Options: DENY` for older browsers), and Trusted Types required
/// with no policy allowed, so that no string ever reaches an HTML sink such as
/// `innerHTML`: the pages build every node with `textContent`, and a database
/// value can only ever be text.
public enum ConsoleSecurityHeaders {
    public static let contentSecurityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
        "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
        "require-trusted-types-for 'script'", "trusted-types 'none'",
    ].joined(separator: "; ")

    public static let all: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy), ("X-Frame-Options", "DENY"),
        ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ("Cross-Origin-Opener-Policy", "same-origin"), ("Cross-Origin-Resource-Policy", "same-origin"),
    ]
}

#ifndef CCURLFETCH_H
#define CCURLFETCH_H

#include <stddef.h>

// One HTTP(S) GET through libcurl's easy interface, for Ferry's JWKS fetch
// (Sources/Ferry/Auth/JWT/JWKSFetch.swift). A C function because Swift cannot
// call curl_easy_setopt, which is variadic. libcurl's easy interface waits in
// poll() on the socket's real events; FoundationNetworking's multi loop spins a
// core while an answer does not come (bench/auth/README.md, "the hanging fetch's spin").

/// What one fetch found. Free with ccurlfetch_free.
typedef struct {
    /// The answer's HTTP status; 0 if no answer's status line arrived.
    long status;
    /// libcurl's CURLcode: 0 when the transfer completed.
    int code;
    /// Set when the whole did not finish within the timeout.
    int timed_out;
    /// Set when the body (or its announced Content-Length) passed max_bytes and
    /// the transfer was abandoned.
    int too_large;
    /// The body read, NUL-terminated (malloc'd; NULL when empty), and its length.
    char *body;
    size_t length;
    /// libcurl's words for a failure (malloc'd; NULL when code is 0).
    char *message;
} ccurlfetch_result;

/// curl_global_init: call once, before any fetch, from one thread. 0 on success.
int ccurlfetch_global_init(void);

/// GET url with `Accept: application/json`: http and https only, TLS peer and
/// host verified, no redirect followed, no cookies, the whole (connect
/// included) bounded by timeout_ms (at least 1), the body by max_bytes. The
/// body of an answer other than 200 is not read.
void ccurlfetch_get(const char *url, long timeout_ms, size_t max_bytes, ccurlfetch_result *result);

/// Frees what a fetch allocated.
void ccurlfetch_free(ccurlfetch_result *result);

#endif

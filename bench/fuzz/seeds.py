#!/usr/bin/env python3
"""Writes the seed corpus, bench/fuzz/corpus/<target>/, from the cases below.

Each target's input format is described in its source file (Sources/ferry-fuzz).
Run it again after changing a case; libFuzzer adds what it finds to a copy, never here.
"""
import base64
import hashlib
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def write(target: str, cases: dict) -> None:
    folder = os.path.join(HERE, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    for name, data in cases.items():
        if isinstance(data, str):
            data = data.encode()
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


H = "Host: f\r\n"
requests = {
    "get": f"GET /v1/terms?set_id=1&limit=5 HTTP/1.1\r\n{H}\r\n",
    "pipelined": f"GET /a HTTP/1.1\r\n{H}\r\nGET /b HTTP/1.1\r\n{H}Connection: close\r\n\r\nPOST /c HTTP/1.1\r\n{H}Content-Length: 3\r\n\r\nabc",
    "post-length": f"POST /v1/terms HTTP/1.1\r\n{H}Content-Type: application/json\r\nContent-Length: 13\r\n\r\n{{\"word\":\"a\"}}",
    "chunked-trailer": f"POST /v1/terms HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n6 ; q=\"x\\\"y\"\r\n world\r\n0\r\nX-T: 1\r\nContent-Length: 9\r\n\r\n",
    "expect-continue": f"PUT /v1/terms/1 HTTP/1.1\r\n{H}Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{{}}",
    "http10-keepalive": "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n",
    "absolute-form": f"GET http://example.com:8080/v1/x?y=%20z+w HTTP/1.1\r\n{H}\r\n",
    "options-asterisk": f"OPTIONS * HTTP/1.1\r\n{H}\r\n",
    "connect": f"CONNECT example.com:443 HTTP/1.1\r\n{H}\r\n",
    "leading-crlf": f"\r\n\r\nGET / HTTP/1.1\r\n{H}\r\n",
    "repeated-length": f"POST / HTTP/1.1\r\n{H}Content-Length: 2, 2\r\nContent-Length: 2\r\n\r\nab",
    # Hostile: each is refused by a careful parser (llhttp, h11); a disagreement here is a smuggling vector.
    "cl-and-te": f"POST / HTTP/1.1\r\n{H}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "conflicting-lengths": f"POST / HTTP/1.1\r\n{H}Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
    "bare-lf": "GET / HTTP/1.1\nHost: f\n\n",
    "bare-cr": "GET / HTTP/1.1\rHost: f\r\n\r\n",
    "obs-fold": f"GET / HTTP/1.1\r\n{H}X: a\r\n b\r\n\r\n",
    "space-before-colon": f"GET / HTTP/1.1\r\n{H}Content-Length : 0\r\n\r\n",
    "te-not-last": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
    "te-twice": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "te-http10": "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "te-xchunked": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: xchunked\r\n\r\n",
    "cl-plus": f"POST / HTTP/1.1\r\n{H}Content-Length: +3\r\n\r\nabc",
    "cl-hex": f"POST / HTTP/1.1\r\n{H}Content-Length: 0x3\r\n\r\nabc",
    "cl-overflow": f"POST / HTTP/1.1\r\n{H}Content-Length: 99999999999999999999999\r\n\r\n",
    "nul-in-value": f"GET / HTTP/1.1\r\n{H}X: a\x00b\r\n\r\n",
    "two-hosts": "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    "no-host": "GET / HTTP/1.1\r\n\r\n",
    "http2": f"GET / HTTP/2.0\r\n{H}\r\n",
    "lowercase-version": f"GET / http/1.1\r\n{H}\r\n",
    "two-spaces": f"GET  / HTTP/1.1\r\n{H}\r\n",
    "userinfo": f"GET http://u@h/ HTTP/1.1\r\n{H}\r\n",
    "encoded-nul": f"GET /a%00b HTTP/1.1\r\n{H}\r\n",
    "bad-escape": f"GET /a?b=%zz HTTP/1.1\r\n{H}\r\n",
    "chunk-ext-empty": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2;\r\nab\r\n0\r\n\r\n",
    "chunk-ext-unbalanced": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2;a=\"b\r\nab\r\n0\r\n\r\n",
    "chunk-size-huge": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFF\r\n",
    "chunk-no-crlf": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
    "trailer-forbidden": f"POST / HTTP/1.1\r\n{H}Transfer-Encoding: chunked\r\n\r\n0\r\nHost: evil\r\nAuthorization: Bearer x\r\n\r\n",
    "long-line": "GET /" + "a" * 300 + f" HTTP/1.1\r\n{H}\r\n",
    "many-headers": f"GET / HTTP/1.1\r\n{H}" + "".join(f"X-{i}: {i}\r\n" for i in range(20)) + "\r\n",
}
# The first byte seeds where http-request cuts the stream.
write("http-request", {name: bytes([i * 37 % 256]) + body.encode() for i, (name, body) in enumerate(requests.items())})

write("chunked", {
    "plain": "5\r\nhello\r\n0\r\n\r\n",
    "two-chunks": "3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n",
    "uppercase-hex": "1F\r\n" + "x" * 31 + "\r\n0\r\n\r\n",
    "leading-zeros": "0005\r\nhello\r\n000\r\n\r\n",
    "extensions": "5 ;a=b ; c\r\nhello\r\n0;last\r\n\r\n",
    "quoted-extension": "5;a=\"q\\\"uo;ted\"\r\nhello\r\n0\r\n\r\n",
    "trailers": "5\r\nhello\r\n0\r\nX-Checksum: 1\r\nContent-Length: 5\r\n\r\n",
    "then-pipelined": "1\r\na\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: f\r\n\r\n",
    # Found by the fuzzer: bytes after a body that read as the start of the next request's method.
    # Found by the fuzzer: trailing whitespace after an extension's value was refused, after a name taken.
    "ext-trailing-whitespace": "0;1=\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t0\t\r\n\r\n",
    "then-method-prefix": "5;a=\"q\\\"uo;ted\"\r\nhello\r\n0\r\n\r\n55555555555555555",
    "empty-ext": "2;\r\nab\r\n0\r\n\r\n",
    "unbalanced-quote": "2;a=\"b\r\nab\r\n0\r\n\r\n",
    "bad-escape": "2;a=\"\\\x01\"\r\nab\r\n0\r\n\r\n",
    "space-before-size": " 2\r\nab\r\n0\r\n\r\n",
    "space-after-size": "2 \r\nab\r\n0\r\n\r\n",
    "negative": "-2\r\nab\r\n0\r\n\r\n",
    "over-limit": "FFFF\r\n",
    "seventeen-digits": "00000000000000002\r\nab\r\n0\r\n\r\n",
    "bare-lf": "2\nab\n0\n\n",
    "missing-crlf": "2\r\nabX0\r\n\r\n",
    "truncated": "5\r\nhel",
})

write("query", {
    "filters": "set_id=a,b&word=x&limit=5",
    "order": "order=word.desc,rank.asc,id&include_deleted=true&modified_since=1700000000000",
    "paging": "paging_token=AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA&page=2",
    "changes": "since=now&limit=100&resources=terms,study_sets",
    "encoded": "w%C3%B6rd=%E2%82%AC+x&a%3Db=c%26d",
    "empty-pairs": "&&a&=b&c=&",
    "bad-escape": "a=%G1",
    "encoded-nul": "a=%00",
    "invalid-utf8": "a=%FF%FE",
    "unknown": "nope=1",
    "array-filter": "tags=x",
    "json-filter": "extra=1",
    "bad-limit": "limit=0&limit=99999999999999999999",
    "page-without-token": "page=2",
    "repeated": "page=1&page=2&paging_token=a&paging_token=b",
    "negative-since": "modified_since=-1",
    "injection": "word=%27%29%3B+DROP+TABLE+terms%3B--&order=word%22%3B",
    "resources-empty": "resources=&since=",
    "resources-commas": "resources=,,terms",
})

write("json-body", {
    "object": '{"word": "a", "set_id": "6e1b9c1e-7c1a-4f3b-9a4e-2c1d0e9f8a7b", "rank": "V"}',
    "array": '[{"word": "a", "rank": "U"}, {"word": "b", "rank": {"after": "x"}}, 3, "s", [1, 2]]',
    "nested": '{"a": {"b": [1, {"c": null}]}, "d": true, "e": false, "f": -1.5e3}',
    "rank-first": '{"rank": "first"}',
    "rank-invalid": '{"rank": "V0"}',
    "rank-nested": '{"x": {"rank": 5}}',
    "rank-in-string": '{"word": "\\"rank\\": \\"V\\""}',
    "rank-escaped-key": '{"\\u0072ank": "0"}',
    # Found by the fuzzer: an escaped quote makes a key read as "rank" to RankScan's byte scan.
    "rank-after-escaped-quote": '{"\\"rank": "V"}',
    "escapes": '{"a\\"b": "\\u00e9\\n", "c": "\\\\"}',
    "duplicate-keys": '{"rank": "V", "rank": "first"}',
    "deep": "[" * 64 + "]" * 64,
    "too-deep": "[" * 65 + "]" * 65,
    "truncated": '{"a": [1, 2',
    "trailing": '{} {}',
    "scalar": '"just a string"',
    "empty": "",
    "whitespace": " \t\r\n{ } \n",
    "control-in-string": '{"a": "b\x01c"}',
    "unicode": '{"wörd": "😀", "€": []}',
    "numbers": '{"a": 0, "b": -0.0, "c": 1E+2, "d": 123456789012345678901234567890}',
    # PATCH bodies for FieldPrecheck, against the fuzz catalog's terms.
    "patch-fields": '{"word": "a", "rank": "V", "revision": 3, "starred": true, "position": -7}',
    "patch-uuid": '{"set_id": "6e1b9c1e7c1a4f3b9a4e2c1d0e9f8a7b", "id": 5, "last_modified": "x"}',
    "patch-array-json": '{"tags": ["x"], "extra": {"a": 1}, "is_deleted": true, "position": null}',
    "patch-wrong": '{"revision": -1, "word": null, "starred": 1, "position": 2147483648}',
})

write("rank", {
    "between": "U,V",
    "adjacent": "V,V1",
    "long": "V" * 40 + ",W",
    "at-limit": "z" * 128 + ",",
    "over-limit": "1" * 129,
    "first": ",U",
    "ends-in-zero": "V0,W",
    "misordered": "b,a",
    "equal": "x,x",
    "bad-char": "V-,W",
    "unicode": "é,ü",
    "only": "V",
    "zeros": "0001,0002",
    "max-digits": "yzzzzz,z",
})

# Paging tokens: version 1, expiry, 16 random bytes, 8-byte tag.
token = b64url(bytes([1]) + struct.pack(">I", 1_800_000_000) + hashlib.sha256(b"seed").digest()[:24])
write("paging-token", {
    "valid": b"\x00" + token.encode(),
    "mapped": b"\x01" + bytes(range(39)),
    "version-2": b"\x00" + b64url(bytes([2]) + bytes(28)).encode(),
    "short": b"\x00" + token[:38].encode(),
    "padded": b"\x00" + token.encode() + b"=",
    "low-bits": b"\x00" + (token[:-1] + "B").encode(),
    "plus-slash": b"\x00" + token.replace("-", "+").replace("_", "/").encode(),
})

frontier = "1" + b64url(struct.pack(">Q", 123456) + b"\x00")
position = "1" + b64url(struct.pack(">Q", 99) + b"\x01" + bytes([5]) + b"terms" + struct.pack(">H", 36) + b"6e1b9c1e-7c1a-4f3b-9a4e-2c1d0e9f8a7b")
write("change-cursor", {
    "frontier": b"\x00" + frontier.encode(),
    "position": b"\x00" + position.encode(),
    "start": b"\x00" + ("1" + b64url(bytes(9))).encode(),
    "version-2": b"\x00" + ("2" + frontier[1:]).encode(),
    "xid-beyond-bigint": b"\x00" + ("1" + b64url(b"\xff" * 8 + b"\x00")).encode(),
    "nul-in-id": b"\x00" + ("1" + b64url(struct.pack(">Q", 1) + b"\x01\x01t\x00\x01\x00")).encode(),
    "mapped": b"\x01" + bytes(range(64)),
    "print-position": b"\x02" + struct.pack(">Q", 42) + b"\x01terms6e1b9c1e",
    "print-frontier": b"\x02" + struct.pack(">Q", 7) + b"\x00",
})

good = b64url(hashlib.sha256(b"token").digest())
write("bearer-token", {
    "valid": b"\x00Bearer " + good.encode(),
    "lowercase": b"\x01bearer " + good.encode(),
    "tabs": b"\x01  BEARER \t" + good.encode() + b" \t",
    "basic": b"\x00Basic dXNlcjpwYXNz",
    "short": b"\x00Bearer abc",
    "no-space": b"\x01Bearer" + good.encode(),
    "bad-char": b"\x00Bearer " + good[:20].encode() + b"+/" + good[22:].encode(),
    "two-tokens": b"\x00Bearer " + good.encode() + b" " + good.encode(),
    "scheme-only": b"\x01Bearer ",
    "long": b"\x00Bearer " + b"A" * 600,
})

import hmac
import json


def jwt(header: dict, claims: dict, secret: bytes = b"ferry-fuzz-secret-of-at-least-32-bytes") -> bytes:
    head = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(json.dumps(claims, separators=(",", ":")).encode())
    return (head + "." + b64url(hmac.new(secret, head.encode(), hashlib.sha256).digest())).encode()


def jwt_text(header: str, claims: str, secret: bytes = b"ferry-fuzz-secret-of-at-least-32-bytes") -> bytes:
    """A token of these exact JSON texts (json.dumps cannot write a member twice)."""
    head = b64url(header.encode()) + "." + b64url(claims.encode())
    return (head + "." + b64url(hmac.new(secret, head.encode(), hashlib.sha256).digest())).encode()


# JWTFuzz's verifier trusts issuer https://fuzz.test with the secret above, at 1,800,000,000 s.
claims = {"iss": "https://fuzz.test", "aud": "ferry", "sub": "fuzz", "iat": 1799999000, "exp": 1800003600}
hs = {"alg": "HS256", "typ": "JWT"}
write("jwt", {
    "valid": jwt(hs, claims),
    "valid-list-aud": jwt(hs, dict(claims, aud=["other", "ferry"], org_id="acme", roles=["a", "b"], nested={"x": [1, 2.5, True, None]})),
    "expired": jwt(hs, dict(claims, exp=1700000000)),
    "not-yet": jwt(hs, dict(claims, nbf=1900000000)),
    "wrong-aud": jwt(hs, dict(claims, aud="x")),
    "exp-string": jwt(hs, dict(claims, exp="soon")),
    "alg-none": jwt({"alg": "none"}, claims)[: -43],
    "rs256-kid": jwt({"alg": "RS256", "kid": "k1"}, claims),
    "crit": jwt({"alg": "HS256", "crit": ["b64"]}, claims),
    "wrong-secret": jwt(hs, claims, b"another-secret-of-at-least-32-bytes!!"),
    "two-parts": jwt(hs, claims).rsplit(b".", 1)[0],
    "deep": jwt(hs, dict(claims, d=[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]])),
    # Issue 51: a member twice, signed, so that only the duplicate check refuses it.
    "dup-sub": jwt_text('{"alg":"HS256","typ":"JWT"}', json.dumps(claims, separators=(",", ":"))[:-1] + ',"sub":"other"}'),
    "dup-header": jwt_text('{"alg":"HS256","kid":"a","kid":"b"}', json.dumps(claims, separators=(",", ":"))),
    "dup-nested": jwt_text('{"alg":"HS256"}', json.dumps(claims, separators=(",", ":"))[:-1] + ',"org":{"id":"a","i\\u0064":"b"}}'),
    "typ-at-jwt": jwt({"alg": "HS256", "typ": "at+jwt"}, claims),
})

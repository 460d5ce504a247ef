#!/usr/bin/env python3
"""bench/auth/jwt-burst.sh's identity provider: one RSA key, its JWKS served on
http://127.0.0.1:PORT/jwks until the file HANG_FLAG exists, after which every
request is accepted and never answered (a hanging provider). At start, writes
to DIR: jwt.txt (a token of that key for subject "bench") and ghosts.txt (40
tokens naming kids the JWKS never lists, as anyone can make them).

    jwt-burst-idp.py PORT ISSUER DIR HANG_FLAG
"""
import base64, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

port, issuer, out, hang = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
numbers = key.public_key().public_numbers()


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def uint(n):
    return b64(n.to_bytes((n.bit_length() + 7) // 8, "big"))


def token(kid, subject, sign=True):
    now = int(time.time())
    head = b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": kid}).encode()) + "." + b64(json.dumps(
        {"iss": issuer, "aud": "ferry", "sub": subject, "iat": now, "exp": now + 86400,
         "email": subject + "@example.com", "org_id": "acme", "roles": ["editor"]}).encode())
    signature = key.sign(head.encode(), padding.PKCS1v15(), hashes.SHA256()) if sign else os.urandom(256)
    return head + "." + b64(signature)


jwks = json.dumps({"keys": [{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
                             "n": uint(numbers.n), "e": uint(numbers.e)}]}).encode()


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if os.path.exists(hang):
            while True:
                time.sleep(3600)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(jwks)))
        self.end_headers()
        self.wfile.write(jwks)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
server.daemon_threads = True
with open(os.path.join(out, "jwt.txt"), "w") as f:
    f.write(token("k1", "bench") + "\n")
with open(os.path.join(out, "ghosts.txt"), "w") as f:
    for n in range(40):
        f.write(token("ghost-%d" % n, "ghost%d" % n, sign=False) + "\n")
with open(os.path.join(out, "idp.ready"), "w") as f:
    f.write("ready\n")
server.serve_forever()

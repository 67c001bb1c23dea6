# Run from the repository root with the test peers' Python: .venv/bin/python Tests/Fixtures/crypto/make-rsa-implicit-rejection.py
# Generates Tests/Fixtures/crypto/rsa-implicit-rejection.json with Python cryptography, whose
# bundled OpenSSL (>= 3.2) applies implicit rejection to RSA PKCS#1 v1.5 decryption.
import json, hashlib, random
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.backends.openssl.backend import backend
import cryptography

d = json.load(open('Tests/Fixtures/crypto/rsa-interop.json'))
key = serialization.load_pem_private_key(d['privateKeyPEM'].encode(), None)
pub = key.public_key().public_numbers()
n, e = pub.n, pub.e
k = (n.bit_length() + 7) // 8
rng = random.Random(20261130)

def nonzero(count):
    return bytes(rng.randrange(1, 256) for _ in range(count))

def raw_encrypt(em):
    assert len(em) == k
    m = int.from_bytes(em, 'big')
    assert m < n
    return pow(m, e, n).to_bytes(k, 'big')

msg = b'{"nid":7,"app":"spreed"}'
cases = []
def add(name, ciphertext, valid):
    out = key.decrypt(ciphertext, padding.PKCS1v15())
    cases.append({"name": name, "ciphertext": ciphertext.hex(), "plaintext": out.hex(), "validPadding": "true" if valid else "false"})

add("valid padding, 24-byte message", raw_encrypt(b'\x00\x02' + nonzero(k - 3 - len(msg)) + b'\x00' + msg), True)
add("valid padding, empty message", raw_encrypt(b'\x00\x02' + nonzero(k - 3) + b'\x00'), True)
add("valid padding, longest message (8-byte PS)", raw_encrypt(b'\x00\x02' + nonzero(8) + b'\x00' + nonzero(k - 11)), True)
add("padding string of 7 bytes", raw_encrypt(b'\x00\x02' + nonzero(7) + b'\x00' + nonzero(k - 10)), False)
add("block type 1 instead of 2", raw_encrypt(b'\x00\x01' + nonzero(k - 3 - len(msg)) + b'\x00' + msg), False)
add("block type 3", raw_encrypt(b'\x00\x03' + nonzero(k - 3 - len(msg)) + b'\x00' + msg), False)
assert n >> (8 * (k - 1)) > 1
add("first byte 1", raw_encrypt(b'\x01\x02' + nonzero(k - 3 - len(msg)) + b'\x00' + msg), False)
add("no zero separator", raw_encrypt(b'\x00\x02' + nonzero(k - 2)), False)
add("ciphertext of zeros", bytes(k), False)
add("ciphertext one", (1).to_bytes(k, 'big'), False)
for i in range(5):
    c = b'\x00' + bytes(rng.randrange(256) for _ in range(k - 1))
    add(f"random ciphertext {i}", c, False)

source = (f"Generated once with Python cryptography {cryptography.__version__} ({backend.openssl_version_text()}, "
          "which rejects PKCS#1 v1.5 padding implicitly) for this repository on 2026-11-30: blocks for the throwaway key "
          "of rsa-interop.json, made by raw RSA (m^e mod n) over chosen encoded messages or taken at random, "
          "each with what the library's PKCS#1 v1.5 decryption returned. A block whose padding is invalid decrypts "
          "to OpenSSL's synthetic message (draft-irtf-cfrg-rsa-guidance implicit rejection). "
          "Made by make-rsa-implicit-rejection.py next to this file. Test vectors, not secrets.")
json.dump({"source": source, "vectors": cases}, open('Tests/Fixtures/crypto/rsa-implicit-rejection.json', 'w'), indent=1)
for c in cases: print(c["name"], c["validPadding"], len(c["plaintext"]) // 2)

"""Baseline for tidings-bench's P1: Web Push decryptions per second with Python's http_ece.

Usage: push_decrypt_bench.py [--seconds S] [--size N]
Encrypts one N-byte payload (3993: the 4096-byte message RFC 8291 allows) per encoding for a fresh subscription,
then decrypts it again and again for S seconds per encoding (the subscription's private key object built once,
as Tidings builds its decryptor once), and prints one JSON line: {"aes128gcm": per second, "aesgcm": per second}.
"""

import argparse
import json
import os
import time

import http_ece
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def rate(encoding, seconds, size):
    receiver = ec.generate_private_key(ec.SECP256R1())
    receiver_public = receiver.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    auth = os.urandom(16)
    sender = ec.generate_private_key(ec.SECP256R1())
    sender_public = sender.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    salt = os.urandom(16)
    plaintext = os.urandom(size)
    body = http_ece.encrypt(
        plaintext, salt=salt, private_key=sender, dh=receiver_public, auth_secret=auth, version=encoding
    )
    if encoding == "aes128gcm":
        decrypt = lambda: http_ece.decrypt(body, private_key=receiver, auth_secret=auth, version="aes128gcm")
    else:
        decrypt = lambda: http_ece.decrypt(
            body, salt=salt, private_key=receiver, dh=sender_public, auth_secret=auth, version="aesgcm"
        )
    assert decrypt() == plaintext
    count = 0
    start = time.perf_counter()
    while True:
        decrypt()
        count += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--size", type=int, default=3993)
    arguments = parser.parse_args()
    figures = {encoding: rate(encoding, arguments.seconds, arguments.size) for encoding in ("aes128gcm", "aesgcm")}
    print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()

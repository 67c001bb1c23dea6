"""Writes crypto-vectors.json and the fuzz seeds in fuzz/ with Python's `cryptography` (an implementation
independent of Tidings' OpenSSL wrapper), following the formats of /work/shared/seeds/README.md (OpenMates):

- content blob (current form): base64("OM" || FNV-1a-32(chat key), big-endian || 12-byte IV || ciphertext+tag)
- content blob (legacy form):  base64(12-byte IV || ciphertext+tag)
- wrapped chat key:            base64(12-byte IV || AES-GCM(master key, chat key)+tag)

The fingerprint (FNV-1a over the raw key bytes) is the public web client's: glowingkitty/OpenMates,
frontend/packages/ui/src/services/encryption/MessageEncryptor.ts, commit d25df2101db8b1131bf4230c45e26d62ed8fde70.
Keys and IVs are fixed, so the output is deterministic. Run from this folder:
    ../../../.venv/bin/python make_crypto_vectors.py
"""
import base64
import json
import os

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def fnv1a32(data: bytes) -> bytes:
    h = 0x811C9DC5
    for b in data:
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h.to_bytes(4, "big")


def seal(key: bytes, iv: bytes, plain: bytes) -> bytes:
    return iv + AESGCM(key).encrypt(iv, plain, None)


def om_blob(key: bytes, iv: bytes, plain: bytes) -> bytes:
    return b"OM" + fnv1a32(key) + seal(key, iv, plain)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


master = bytes(range(0x40, 0x60))
chat_a = bytes(range(0x00, 0x20))
chat_b = bytes(range(0xA0, 0xC0))
iv = lambda n: bytes([n] * 12)

vectors = {
    "_source": "made by make_crypto_vectors.py (Python cryptography's AESGCM); formats of the seeds README, OpenMates section",
    "master_key_b64": b64(master),
    "chats": [
        {
            "chat_id": "chat-a",
            "chat_key_b64": b64(chat_a),
            "fingerprint_hex": fnv1a32(chat_a).hex(),
            "encrypted_chat_key": b64(seal(master, iv(1), chat_a)),
            "encrypted_title": b64(om_blob(chat_a, iv(2), "Trip to Lisbon".encode())),
            "messages": [
                {"message_id": "a-1", "form": "current", "plaintext": "Hello, mate!",
                 "encrypted_content": b64(om_blob(chat_a, iv(3), "Hello, mate!".encode()))},
                {"message_id": "a-2", "form": "legacy", "plaintext": "Grüße aus Lissabon 🌊",
                 "encrypted_content": b64(seal(chat_a, iv(4), "Grüße aus Lissabon 🌊".encode()))},
                {"message_id": "a-3", "form": "current", "plaintext": "",
                 "encrypted_content": b64(om_blob(chat_a, iv(5), b""))},
                # Sealed under chat B's key: its fingerprint names B, so it fails alone with a fingerprint error.
                {"message_id": "a-4", "form": "current", "error": "fingerprintMismatch",
                 "encrypted_content": b64(om_blob(chat_b, iv(6), "not for this chat".encode()))},
                # A legacy blob whose IV starts with "OM": parses as the current form, opens as legacy.
                {"message_id": "a-5", "form": "legacy-om-iv", "plaintext": "IV starts with OM",
                 "encrypted_content": b64(seal(chat_a, b"OM" + bytes([7] * 10), "IV starts with OM".encode()))},
            ],
        },
        {
            "chat_id": "chat-b",
            "chat_key_b64": b64(chat_b),
            "fingerprint_hex": fnv1a32(chat_b).hex(),
            "encrypted_chat_key": b64(seal(master, iv(8), chat_b)),
            "messages": [
                {"message_id": "b-1", "form": "current", "plaintext": "{\"type\":\"text\",\"text\":\"json body\"}",
                 "encrypted_content": b64(om_blob(chat_b, iv(9), b"{\"type\":\"text\",\"text\":\"json body\"}"))},
            ],
        },
    ],
    # Wrapped under another master key: unwrapping fails with authenticationFailed.
    "chat_key_wrapped_by_other_master": b64(seal(bytes(32), iv(10), chat_a)),
    # Wraps 24 bytes, not an AES key: invalidChatKey.
    "wrapped_24_byte_key": b64(seal(master, iv(11), bytes(24))),
}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "crypto-vectors.json"), "w") as f:
    json.dump(vectors, f, indent=2, ensure_ascii=False)
    f.write("\n")

# Fuzz seeds for Fuzz/Sources/FuzzOpenMatesWire (its fixed keys: chat 0x11 * 32, master 0x22 * 32).
fuzz = os.path.join(here, "fuzz")
os.makedirs(fuzz, exist_ok=True)
fuzz_chat, fuzz_master = bytes([0x11] * 32), bytes([0x22] * 32)
seeds = {
    "blob-current.bin": om_blob(fuzz_chat, iv(12), b"fuzz seed"),
    "blob-legacy.bin": seal(fuzz_chat, iv(13), b"fuzz seed"),
    "blob-current.b64": b64(om_blob(fuzz_chat, iv(14), b"fuzz seed")).encode(),
    "wrapped-key.b64": b64(seal(fuzz_master, iv(15), fuzz_chat)).encode(),
}
with open(os.path.join(here, "wire-examples.json")) as f:
    for index, frame in enumerate(json.load(f)["frames"]):
        seeds[f"frame-{index:02d}.json"] = json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode()
for name, data in seeds.items():
    with open(os.path.join(fuzz, name), "wb") as f:
        f.write(data)

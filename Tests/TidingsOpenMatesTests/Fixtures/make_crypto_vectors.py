"""Writes crypto-vectors.json and the fuzz seeds in fuzz/ with Python's `cryptography` (an implementation
independent of Tidings' OpenSSL wrapper), following the formats of /work/shared/seeds/README.md (OpenMates):

- content blob (current form): base64("OM" || FNV-1a-32(chat key), big-endian || 12-byte IV || ciphertext+tag)
- content blob (legacy form):  base64(12-byte IV || ciphertext+tag)
- wrapped chat key:            base64(12-byte IV || AES-GCM(master key, chat key)+tag)
- embed key entries:           base64(12-byte IV || AES-GCM(master or chat key, embed key)+tag), named by
                               hashed_embed_id = hex SHA-256(embed ID); embed fields base64(IV || AES-GCM(embed
                               key, text)+tag); new embed keys HKDF-SHA256(chat key, salt "openmates-embed-key-v1",
                               info embed ID) — MetadataEncryptor.ts at e1cf380bee25a74d7cc092710d040e20dbf4bb7d
- hidden chat key:             base64(IV || AES-GCM(secret, chat key)+tag), secret = PBKDF2-HMAC-SHA256(
                               base64(master key || UTF-8 password), first 16 bytes of the email salt, 100,000, 32)
                               — hiddenChatService.ts at 128d46f6fc0c8520ab3850b38d9d24681f5d91a6, cryptoService.ts
                               (deriveKeyFromPassword) at 002c48af19c44f3d0a575c67d24ba410620d445b

The fingerprint (FNV-1a over the raw key bytes) is the public web client's: glowingkitty/OpenMates,
frontend/packages/ui/src/services/encryption/MessageEncryptor.ts, commit d25df2101db8b1131bf4230c45e26d62ed8fde70.
Keys and IVs are fixed, so the output is deterministic. Run from this folder:
    ../../../.venv/bin/python make_crypto_vectors.py
"""
import base64
import hashlib
import json
import os

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


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


def sha_hex(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def embed_key_from_chat_key(chat_key: bytes, embed_id: str) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"openmates-embed-key-v1", info=embed_id.encode()).derive(
        chat_key)


def hidden_secret(master_key: bytes, password: str, email_salt: bytes) -> bytes:
    combined = base64.b64encode(master_key + password.encode()).decode()
    return hashlib.pbkdf2_hmac("sha256", combined.encode(), email_salt[:16], 100_000, 32)


# Embeds of chat-a. e-1: derived key with a master and a chat entry; e-2: a random key with a chat entry only;
# e-3: a child of e-1 without entries of its own (uses its parent's key); e-4: entries wrapped by other keys;
# e-5: no entry at all.
e1_key = embed_key_from_chat_key(chat_a, "e-1")
e2_key = bytes(range(0x60, 0x80))
e4_key = bytes(range(0x80, 0xA0))
hashed_a = sha_hex("chat-a")
vectors["embeds"] = {
    "chat_id": "chat-a",
    "derived_key_e1_b64": b64(e1_key),
    "embeds": [
        {"embed_id": "e-1", "hashed_chat_id": hashed_a, "plaintext": "{\"language\":\"python\",\"code\":\"print(1)\"}",
         "type": "code", "preview": "print(1)",
         "encrypted_content": b64(seal(e1_key, iv(20), b"{\"language\":\"python\",\"code\":\"print(1)\"}")),
         "encrypted_type": b64(seal(e1_key, iv(21), b"code")),
         "encrypted_text_preview": b64(seal(e1_key, iv(22), b"print(1)"))},
        {"embed_id": "e-2", "hashed_chat_id": hashed_a, "plaintext": "url: https://example.org\ntitle: Example",
         "encrypted_content": b64(seal(e2_key, iv(23), b"url: https://example.org\ntitle: Example"))},
        {"embed_id": "e-3", "hashed_chat_id": hashed_a, "parent_embed_id": "e-1", "plaintext": "child of e-1",
         "encrypted_content": b64(seal(e1_key, iv(24), b"child of e-1"))},
        {"embed_id": "e-4", "hashed_chat_id": hashed_a, "error": "authenticationFailed",
         "encrypted_content": b64(seal(e4_key, iv(25), b"sealed under a key nobody can unwrap"))},
        {"embed_id": "e-5", "hashed_chat_id": hashed_a, "error": "noEmbedKey",
         "encrypted_content": b64(seal(e4_key, iv(26), b"no key entry"))},
    ],
    "embed_keys": [
        {"id": "k-1m", "hashed_embed_id": sha_hex("e-1"), "key_type": "master",
         "encrypted_embed_key": b64(seal(master, iv(27), e1_key))},
        {"id": "k-1c", "hashed_embed_id": sha_hex("e-1"), "key_type": "chat", "hashed_chat_id": hashed_a,
         "encrypted_embed_key": b64(seal(chat_a, iv(28), e1_key))},
        {"id": "k-2c", "hashed_embed_id": sha_hex("e-2"), "key_type": "chat", "hashed_chat_id": hashed_a,
         "encrypted_embed_key": b64(seal(chat_a, iv(29), e2_key))},
        {"id": "k-4m", "hashed_embed_id": sha_hex("e-4"), "key_type": "master",
         "encrypted_embed_key": b64(seal(bytes(32), iv(30), e4_key))},
        {"id": "k-4c", "hashed_embed_id": sha_hex("e-4"), "key_type": "chat", "hashed_chat_id": hashed_a,
         "encrypted_embed_key": b64(seal(chat_b, iv(31), e4_key))},
    ],
}

# Hidden chats: chat-h hidden with "2468", chat-i with another password; the email salt has 20 bytes (16 used).
email_salt = bytes(range(0x70, 0x84))
secret_1 = hidden_secret(master, "2468", email_salt)
secret_2 = hidden_secret(master, "längeres Passwort", email_salt)
chat_h = bytes(range(0xC0, 0xE0))
chat_i = bytes(range(0xE0, 0x100))
vectors["hidden"] = {
    "email_salt_b64": b64(email_salt),
    "unlocks": [
        {"password": "2468", "secret_b64": b64(secret_1)},
        {"password": "längeres Passwort", "secret_b64": b64(secret_2)},
    ],
    "chats": [
        {"chat_id": "chat-h", "password": "2468", "chat_key_b64": b64(chat_h),
         "encrypted_chat_key": b64(seal(secret_1, iv(32), chat_h)),
         "encrypted_title": b64(om_blob(chat_h, iv(33), "Hidden plans".encode())),
         "messages": [{"message_id": "h-1", "plaintext": "only with the code",
                       "encrypted_content": b64(om_blob(chat_h, iv(34), "only with the code".encode()))}]},
        {"chat_id": "chat-i", "password": "längeres Passwort", "chat_key_b64": b64(chat_i),
         "encrypted_chat_key": b64(seal(secret_2, iv(35), chat_i)),
         "messages": [{"message_id": "i-1", "plaintext": "another password",
                       "encrypted_content": b64(om_blob(chat_i, iv(36), "another password".encode()))}]},
    ],
}

# A title sealed under the master key itself (the format notes' "Format D": IV || ciphertext+tag, no header).
vectors["master_key_title"] = {"chat_id": "chat-b", "plaintext": "Master-key title",
                               "encrypted_title": b64(seal(master, iv(37), "Master-key title".encode()))}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "crypto-vectors.json"), "w") as f:
    json.dump(vectors, f, indent=2, ensure_ascii=False)
    f.write("\n")

# Fuzz seeds for Fuzz/Sources/FuzzOpenMatesWire (its fixed keys: chat 0x11 * 32, master 0x22 * 32, embed
# 0x33 * 32, hidden-chat secret 0x44 * 32).
fuzz = os.path.join(here, "fuzz")
os.makedirs(fuzz, exist_ok=True)
fuzz_chat, fuzz_master = bytes([0x11] * 32), bytes([0x22] * 32)
fuzz_embed, fuzz_hidden = bytes([0x33] * 32), bytes([0x44] * 32)
seeds = {
    "blob-current.bin": om_blob(fuzz_chat, iv(12), b"fuzz seed"),
    "blob-legacy.bin": seal(fuzz_chat, iv(13), b"fuzz seed"),
    "blob-current.b64": b64(om_blob(fuzz_chat, iv(14), b"fuzz seed")).encode(),
    "wrapped-key.b64": b64(seal(fuzz_master, iv(15), fuzz_chat)).encode(),
    # Embeds and hidden chats (fixed embed key 0x33 * 32, hidden-chat secret 0x44 * 32).
    "embed-field.b64": b64(seal(fuzz_embed, iv(40), b"fuzz embed")).encode(),
    "embed-key.b64": b64(seal(fuzz_master, iv(41), fuzz_embed)).encode(),
    "hidden-key.b64": b64(seal(fuzz_hidden, iv(42), fuzz_chat)).encode(),
    "embeds-object.txt": json.dumps({
        "chat_id": "fuzz",
        "embeds": [
            {"embed_id": "f-1", "encrypted_content": b64(seal(fuzz_embed, iv(43), b"fuzz embed content")),
             "encrypted_type": b64(seal(fuzz_embed, iv(45), b"code"))},
            {"embed_id": "f-2", "parent_embed_id": "f-1",
             "encrypted_content": b64(seal(fuzz_embed, iv(46), b"fuzz child embed"))},
        ],
        "embed_keys": [
            {"hashed_embed_id": sha_hex("f-1"), "key_type": "master",
             "encrypted_embed_key": b64(seal(fuzz_master, iv(44), fuzz_embed))},
        ],
    }, separators=(",", ":")).encode(),
}
with open(os.path.join(here, "wire-examples.json")) as f:
    for index, frame in enumerate(json.load(f)["frames"]):
        seeds[f"frame-{index:02d}.json"] = json.dumps(frame, separators=(",", ":"), ensure_ascii=False).encode()
for name, data in seeds.items():
    with open(os.path.join(fuzz, name), "wb") as f:
        f.write(data)

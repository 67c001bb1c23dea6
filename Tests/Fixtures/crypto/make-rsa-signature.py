# Makes rsa-signature.json: RSASSA-PKCS1-v1_5 SHA-512 signatures by Python `cryptography` with the
# private key of rsa-interop.json (the signature a Nextcloud server puts on each push).
# Run: .venv/bin/python Tests/Fixtures/crypto/make-rsa-signature.py
import base64, json, pathlib
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

here = pathlib.Path(__file__).parent
interop = json.loads((here / "rsa-interop.json").read_text())
key = serialization.load_pem_private_key(interop["privateKeyPEM"].encode(), password=None)
messages = [b"", b"Tidings push subject", bytes(range(256))]
vectors = [
    {
        "messageBase64": base64.b64encode(m).decode(),
        "signatureBase64": base64.b64encode(key.sign(m, padding.PKCS1v15(), hashes.SHA512())).decode(),
    }
    for m in messages
]
import cryptography

source = (
    f"Generated with Python cryptography {cryptography.__version__} by make-rsa-signature.py in this folder: "
    "RSASSA-PKCS1-v1_5 SHA-512 signatures by the throwaway key of rsa-interop.json. Interop vectors, not secrets."
)
(here / "rsa-signature.json").write_text(json.dumps({"source": source, "vectors": vectors}, indent=2) + "\n")

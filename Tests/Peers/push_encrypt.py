"""Web Push test peer: the real http_ece and pywebpush libraries encrypting and decrypting on request.

Usage: push_encrypt.py --port 0     (prints `READY <port>` once listening on 127.0.0.1)

Routes (JSON in, JSON out; every byte string is base64url without padding; many cases per request, so one
process serves a whole test run):
  POST /encrypt  {"cases": [{"library": "http_ece"|"pywebpush", "encoding": "aes128gcm"|"aesgcm",
                             "p256dh": .., "auth": .., "plaintext": .., "rs": N (http_ece only, optional)}]}
                 -> {"results": [{"body": .., "contentEncoding": .., "cryptoKey": str|null,
                                  "encryption": str|null} | {"noData": true}]}
                 http_ece: a fresh sender key and salt per case, headers composed as a server sends them;
                 pywebpush: WebPusher's own request preparation (its headers and body exactly); pywebpush
                 sends an empty payload as a push without body, reported as {"noData": true}.
  POST /decrypt  {"cases": [{"privateKey": .., "auth": .., "encoding": .., "body": ..,
                             "cryptoKey": str|null, "encryption": str|null}]}
                 -> {"results": [{"plaintext": ..} | {"error": "<http_ece's message>"}]}
                 http_ece decrypting what Tidings (its sandbox) encrypted.
"""

import argparse
import asyncio
import base64
import os
import signal

import http_ece
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pywebpush import NoData, WebPusher

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script


def b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def header_parameters(value):
    parameters = {}
    for item in (value or "").replace(",", ";").split(";"):
        name, _, text = item.strip().partition("=")
        if text:
            parameters.setdefault(name.strip().lower(), text.strip())
    return parameters


def encrypt_http_ece(case):
    plaintext = b64decode(case["plaintext"])
    receiver = b64decode(case["p256dh"])
    auth = b64decode(case["auth"])
    encoding = case["encoding"]
    server_key = ec.generate_private_key(ec.SECP256R1())
    sender = server_key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    salt = os.urandom(16)
    rs = int(case.get("rs") or 4096)
    body = http_ece.encrypt(
        plaintext, salt=salt, private_key=server_key, dh=receiver, auth_secret=auth, version=encoding, rs=rs
    )
    result = {"body": b64encode(body), "contentEncoding": encoding, "cryptoKey": None, "encryption": None}
    if encoding == "aesgcm":
        result["cryptoKey"] = "dh=" + b64encode(sender)
        result["encryption"] = "salt=" + b64encode(salt) + ("" if rs == 4096 else ";rs=%d" % rs)
    return result


def encrypt_pywebpush(case):
    subscription = {
        "endpoint": "https://push.invalid/send/1",
        "keys": {"p256dh": case["p256dh"], "auth": case["auth"]},
    }
    try:
        prepared = WebPusher(subscription)._prepare_send_data(
            b64decode(case["plaintext"]), content_encoding=case["encoding"]
        )
    except NoData:
        return {"noData": True}
    if prepared["data"] is None:
        # pywebpush sends an empty payload as a push without a body (and without Content-Encoding).
        return {"noData": True}
    headers = prepared["headers"]
    return {
        "body": b64encode(prepared["data"]),
        "contentEncoding": headers.get("content-encoding"),
        "cryptoKey": headers.get("crypto-key"),
        "encryption": headers.get("encryption"),
    }


def decrypt_http_ece(case):
    scalar = int.from_bytes(b64decode(case["privateKey"]), "big")
    private_key = ec.derive_private_key(scalar, ec.SECP256R1())
    encoding = case["encoding"]
    body = b64decode(case["body"])
    auth = b64decode(case["auth"])
    try:
        if encoding == "aes128gcm":
            plaintext = http_ece.decrypt(body, private_key=private_key, auth_secret=auth, version="aes128gcm")
        else:
            key = header_parameters(case.get("cryptoKey"))
            encryption = header_parameters(case.get("encryption"))
            plaintext = http_ece.decrypt(
                body,
                salt=b64decode(encryption["salt"]),
                private_key=private_key,
                dh=b64decode(key["dh"]),
                auth_secret=auth,
                rs=int(encryption.get("rs", "4096")),
                version="aesgcm",
            )
    except Exception as error:  # http_ece raises ECEException, cryptography InvalidTag and others
        return {"error": getattr(error, "message", None) or repr(error)}
    return {"plaintext": b64encode(plaintext)}


async def encrypt(request):
    cases = (await request.json())["cases"]
    encoders = {"http_ece": encrypt_http_ece, "pywebpush": encrypt_pywebpush}
    return web.json_response({"results": [encoders[case["library"]](case) for case in cases]})


async def decrypt(request):
    cases = (await request.json())["cases"]
    return web.json_response({"results": [decrypt_http_ece(case) for case in cases]})


async def main():
    peer_lifeline.install()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    arguments = parser.parse_args()
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/encrypt", encrypt)
    app.router.add_post("/decrypt", decrypt)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", arguments.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print("READY %d" % port, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    await stop.wait()
    os._exit(0)


if __name__ == "__main__":
    asyncio.run(main())

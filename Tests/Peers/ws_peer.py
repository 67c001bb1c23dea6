"""WebSocket test peer: the `websockets` library's server on 127.0.0.1, optionally with TLS.

Usage: ws_peer.py --port 0 [--tls-cert server.pem --tls-key server.key [--tls-legacy-only]]
--tls-legacy-only offers TLS 1.0 and 1.1 only (at OpenSSL security level 0, which they need); before
printing READY it proves that by completing a TLS 1.1 handshake with itself, and exits with an error
if this machine's OpenSSL cannot, so a test can never pass against a server that refused everything.
Prints `READY <port>` once listening. Behaviour by request path:
  /echo            echo every message back, same type
  /close/<code>    send one text "closing", then close with <code> and reason "server says bye"
  /fragments       send a text message as fragments "frag"+"ment"+"ed ✓", then a binary one in 3 fragments
  /ping            ping the client, wait for its pong, then send text "pong received"
  /headers         send a JSON text of selected request headers and the chosen subprotocol
  /flood/<n>/<size> send n binary messages of <size> bytes as fast as the client takes them (the first
                   4 bytes of message i are i, big-endian), then echo
  anything else    echo
"""

import argparse
import asyncio
import json
import logging
import os
import signal
import ssl
import sys
import warnings

from websockets.asyncio.server import serve

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script


async def handler(ws):
    path = ws.request.path
    if path.startswith("/close/"):
        code = int(path.rsplit("/", 1)[1])
        await ws.send("closing")
        await ws.close(code=code, reason="server says bye")
        return
    if path.startswith("/flood/"):
        _, _, count, size = path.split("/")
        filler = bytes(max(0, int(size) - 4))
        for index in range(int(count)):
            await ws.send(index.to_bytes(4, "big") + filler)
        async for message in ws:
            await ws.send(message)
        return
    if path == "/fragments":
        await ws.send(["frag", "ment", "ed ✓"])
        await ws.send([b"\x00\x01", b"", b"\x02\xff"])
        async for message in ws:
            await ws.send(message)
        return
    if path == "/ping":
        waiter = await ws.ping(b"peer-ping")
        await asyncio.wait_for(waiter, timeout=10)
        await ws.send("pong received")
        async for message in ws:
            await ws.send(message)
        return
    if path == "/headers":
        headers = ws.request.headers
        await ws.send(
            json.dumps(
                {
                    "authorization": headers.get("Authorization"),
                    "origin": headers.get("Origin"),
                    "cookie": headers.get("Cookie"),
                    "subprotocol": ws.subprotocol,
                }
            )
        )
        async for message in ws:
            await ws.send(message)
        return
    async for message in ws:
        await ws.send(message)


async def prove_legacy_tls(port):
    """Completes a TLS 1.0/1.1-only handshake with our own server, or exits with the reason."""
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    client.set_ciphers("DEFAULT:@SECLEVEL=0")
    client.minimum_version = ssl.TLSVersion.TLSv1
    client.maximum_version = ssl.TLSVersion.TLSv1_1
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, ssl=client), 10)
    except Exception as error:  # noqa: BLE001 - any failure means the mode is unavailable
        raise SystemExit(f"this OpenSSL cannot serve TLS 1.0/1.1: {error}")
    version = writer.get_extra_info("ssl_object").version()
    writer.close()
    if version not in ("TLSv1", "TLSv1.1"):
        raise SystemExit(f"legacy mode negotiated {version}")
    print(f"legacy TLS proven: {version}", file=sys.stderr, flush=True)


def select_subprotocol(connection, offered):
    """Accepts clients offering no subprotocol; otherwise picks the first known one they offer."""
    for name in offered:
        if name in ("chat.v2", "chat.v1"):
            return name
    return None


async def main():
    peer_lifeline.install()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--tls-legacy-only", action="store_true")
    args = parser.parse_args()
    # Failures of the server side (bad frames from the client) go to stderr, which the tests show.
    logging.basicConfig(level=logging.INFO if os.environ.get("WS_PEER_DEBUG") else logging.WARNING)
    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_legacy_only:
            # Python marks these versions deprecated; offering them is the point of this mode.
            warnings.filterwarnings("ignore", category=DeprecationWarning)
            # OpenSSL 3 refuses TLS 1.0/1.1 at its default security level; level 0 allows them.
            context.set_ciphers("DEFAULT:@SECLEVEL=0")
            context.minimum_version = ssl.TLSVersion.TLSv1
            context.maximum_version = ssl.TLSVersion.TLSv1_1
    stop = asyncio.get_running_loop().create_future()
    # Exit at once on SIGTERM: a graceful close would wait for every client's closing handshake.
    # A parent that spawns us from a Swift (libdispatch) thread passes on its blocked-signal mask, so
    # SIGTERM must be unblocked first or it would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    async with serve(
        handler,
        "127.0.0.1",
        args.port,
        ssl=context,
        max_size=None,
        ping_interval=None,
        select_subprotocol=select_subprotocol,
    ) as server:
        port = server.sockets[0].getsockname()[1]
        if args.tls_legacy_only:
            await prove_legacy_tls(port)
        print(f"READY {port}", flush=True)
        await stop


if __name__ == "__main__":
    asyncio.run(main())

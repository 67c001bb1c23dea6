#!/usr/bin/env python3
"""python-socketio's AsyncClient against a Tidings sandbox Socket.IO server (SandboxSocketIOTests' routes).

Usage: sio_client_probe.py --url http://127.0.0.1:PORT --transport polling|websocket|upgrade

Connects to `/` and to `/chat` (auth {"token": "t"}), checks acks both ways and binary, and prints
`OK <checks>` (exit 0) or `FAIL <what>` (exit 1).
"""

import argparse
import asyncio
import sys

import socketio


async def run(url, transport):
    checks = 0

    def check(condition, what):
        nonlocal checks
        if not condition:
            raise AssertionError(what)
        checks += 1

    transports = {"polling": ["polling"], "websocket": ["websocket"], "upgrade": ["polling", "websocket"]}[transport]
    # A loaded machine (the whole suite on 2 shared cores) can take longer than Engine.IO's 5 s request
    # timeout to answer the polling handshake; the test bounds the run anyway.
    client = socketio.AsyncClient(reconnection=False, request_timeout=30)

    @client.on("question", namespace="/chat")
    async def question(text):
        return f"answer to {text}"

    await client.connect(url, transports=transports, namespaces=["/", "/chat"], auth={"token": "t"},
                         wait_timeout=10)
    echo = await client.call("echo", {"a": [1, 2.5, None, True], "s": "é"}, timeout=10)
    check(echo == {"a": [1, 2.5, None, True], "s": "é"}, f"echo {echo!r}")
    reply = await client.call("binary", b"\x00\x01\x02\xff", timeout=10)
    check(reply == (4, b"\xff\x02\x01\x00"), f"binary {reply!r}")
    asked = await client.call("ask", "life", namespace="/chat", timeout=10)
    check(asked == "answer to life", f"server ack {asked!r}")
    if transport == "upgrade":
        for _ in range(200):
            if client.transport() == "websocket":
                break
            await asyncio.sleep(0.05)
        check(client.transport() == "websocket", "upgraded")
    else:
        check(client.transport() == transports[0], "transport")
    await client.disconnect()
    return checks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--transport", required=True)
    args = parser.parse_args()
    try:
        checks = asyncio.run(asyncio.wait_for(run(args.url, args.transport), 30))
    except Exception as error:  # noqa: BLE001 - the test reads the reason from the output
        print(f"FAIL {error!r}", flush=True)
        sys.exit(1)
    print(f"OK {checks}", flush=True)


if __name__ == "__main__":
    main()

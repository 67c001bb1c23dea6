#!/usr/bin/env python3
"""A python-socketio 5.x server (aiohttp) for Tidings' Socket.IO interop tests and benchmark.

Usage: socketio_server.py --port 0 [--always-connect] [--ping-interval S] [--ping-timeout S]

Binds 127.0.0.1 only and prints `READY <port>` once it accepts connections.

Default namespace "/":
  connect          refuses auth {"reject": true} with ConnectionRefusedError("Not authorized", {"code": 401});
                   with auth {"early": n} emits n "welcome" events from the connect handler (sent before
                   the connect reply unless --always-connect).
  echo *args       acknowledges with the same arguments (binary included).
  count key        counts emits per key; no ack.
  stats            acknowledges with {key: count}.
  ask text         calls the client's "question" event with an ack and acknowledges with its answer.
  binary data      acknowledges with [len(data), reversed data].
  burst n          emits "tick" i for i in 0..<n, then acknowledges with n.
  disconnect_me    disconnects the client from the server side.
  auth             acknowledges with the auth payload the client connected with.
Namespace "/admin": connect needs auth {"token": "secret"}; "whoami" acknowledges with {"namespace", "sid"}.
"""

import argparse
import signal

import socketio
from aiohttp import web

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script
import aiohttp_serve  # Tests/Peers/aiohttp_serve.py, beside this script


def main():
    peer_lifeline.install()
    # A process started by Foundation's Process inherits a mask that blocks SIGTERM; the tests stop peers with it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--always-connect", action="store_true")
    parser.add_argument("--ping-interval", type=float, default=25)
    parser.add_argument("--ping-timeout", type=float, default=20)
    args = parser.parse_args()

    sio = socketio.AsyncServer(
        async_mode="aiohttp",
        always_connect=args.always_connect,
        ping_interval=args.ping_interval,
        ping_timeout=args.ping_timeout,
        max_http_buffer_size=16 * 1024 * 1024,
    )
    app = web.Application()
    sio.attach(app)
    counts = {}
    auths = {}

    @sio.event
    async def connect(sid, environ, auth):
        auth = auth or {}
        if auth.get("reject"):
            raise socketio.exceptions.ConnectionRefusedError("Not authorized", {"code": 401})
        auths[sid] = auth
        for i in range(int(auth.get("early", 0))):
            await sio.emit("welcome", i, to=sid)

    @sio.event
    async def disconnect(sid, *reason):
        auths.pop(sid, None)

    @sio.event
    async def echo(sid, *data):
        return data

    @sio.event
    async def count(sid, key):
        counts[key] = counts.get(key, 0) + 1

    @sio.event
    async def stats(sid):
        return counts

    @sio.event
    async def ask(sid, text):
        return await sio.call("question", text, to=sid, timeout=10)

    @sio.event
    async def binary(sid, data):
        return len(data), bytes(reversed(data))

    @sio.event
    async def burst(sid, n):
        for i in range(n):
            await sio.emit("tick", i, to=sid)
        return n

    @sio.event
    async def disconnect_me(sid):
        await sio.disconnect(sid)

    @sio.on("auth")
    async def auth_event(sid):
        return auths.get(sid)

    @sio.event(namespace="/admin")
    async def connect(sid, environ, auth):  # noqa: F811
        if not auth or auth.get("token") != "secret":
            raise socketio.exceptions.ConnectionRefusedError("bad token")

    @sio.on("whoami", namespace="/admin")
    async def whoami(sid):
        return {"namespace": "/admin", "sid": sid}

    aiohttp_serve.serve(app, args.port)


if __name__ == "__main__":
    main()

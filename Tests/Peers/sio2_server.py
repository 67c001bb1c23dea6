#!/usr/bin/env python3
"""A python-socketio 4.x server (Socket.IO protocol 4 over Engine.IO 3, what socket.io 2.x servers speak)
on aiohttp, for Tidings' Engine.IO 3 interop tests. Runs with .venv-eio3/bin/python
(Tests/Peers/requirements-eio3.txt).

Usage: sio2_server.py --port 0

Binds 127.0.0.1 only and prints `READY <port>` once it accepts connections.

Default namespace "/" (Socket.IO 2.x connects it by itself; there is no auth payload, so "auth" is the
handshake's Authorization header):
  connect          refuses a handshake with `Authorization: reject`; otherwise emits "welcome" with the
                   header's value.
  echo *args       acknowledges with the same arguments (binary included).
  binary data      acknowledges with [len(data), reversed data].
  auth             acknowledges with the Authorization header the client connected with.
  push n           emits "tick" i for i in 0..<n from the server, then acknowledges with n.
  disconnect_me    disconnects the client from the server side.
  login payload    YpChat's login: emits "loginSuccess" {userName, gender, age, country}.
  message payload  YpChat's message: emits "messageSent" {messageId}, then "message" back from the user
                   "echo" with the same text and the message id "echo-<messageId>".
Namespace "/admin": "whoami" acknowledges with {"namespace": "/admin", "sid": sid}.
"""

import argparse
import asyncio
import signal

import socketio
from aiohttp import web

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script
import aiohttp_serve  # Tests/Peers/aiohttp_serve.py, beside this script


class Manager(socketio.AsyncManager):
    """python-socketio 4.6's manager hands coroutines to asyncio.wait, which Python 3.11 refuses: this one
    awaits them with asyncio.gather, otherwise the same."""

    async def emit(self, event, data, namespace, room=None, skip_sid=None, callback=None, **kwargs):
        if namespace not in self.rooms or room not in self.rooms[namespace]:
            return
        skip = skip_sid if isinstance(skip_sid, list) else [skip_sid]
        sends = []
        for sid in self.get_participants(namespace, room):
            if sid not in skip:
                ack = self._generate_ack_id(sid, namespace, callback) if callback is not None else None
                sends.append(self.server._emit_internal(sid, event, data, namespace, ack))
        await asyncio.gather(*sends)


def main():
    peer_lifeline.install()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    sio = socketio.AsyncServer(
        async_mode="aiohttp", client_manager=Manager(), max_http_buffer_size=16 * 1024 * 1024
    )
    app = web.Application()
    sio.attach(app)
    auths = {}

    @sio.event
    async def connect(sid, environ):
        auth = environ.get("HTTP_AUTHORIZATION")
        if auth == "reject":
            return False
        auths[sid] = auth
        await sio.emit("welcome", auth, room=sid)

    @sio.event
    async def disconnect(sid):
        auths.pop(sid, None)

    @sio.event
    async def echo(sid, *data):
        return data

    @sio.event
    async def binary(sid, data):
        return len(data), bytes(reversed(data))

    @sio.on("auth")
    async def auth_event(sid):
        return auths.get(sid)

    @sio.event
    async def push(sid, n):
        for i in range(n):
            await sio.emit("tick", i, room=sid)
        return n

    @sio.event
    async def disconnect_me(sid):
        await sio.disconnect(sid)

    @sio.event
    async def login(sid, payload):
        user = {key: payload.get(key) for key in ("userName", "gender", "age", "country")}
        await sio.emit("loginSuccess", user, room=sid)

    @sio.event
    async def message(sid, payload):
        await sio.emit("messageSent", {"messageId": payload.get("messageId")}, room=sid)
        reply = {"fromUserName": "echo", "message": payload.get("message"), "messageId": "echo-" + payload.get("messageId")}
        await sio.emit("message", reply, room=sid)

    @sio.on("whoami", namespace="/admin")
    async def whoami(sid):
        return {"namespace": "/admin", "sid": sid}

    aiohttp_serve.serve(app, args.port)


if __name__ == "__main__":
    main()

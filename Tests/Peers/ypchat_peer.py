#!/usr/bin/env python3
"""A small YpChat server on python-socketio 5.x + aiohttp, for Tidings' YpChat interop tests.

Usage: ypchat_peer.py --port 0

Binds 127.0.0.1 only and prints `READY <port>` once it accepts connections. REST and Socket.IO share
the port, as on the real server:
  GET  /api/session   creates a session (cookie connect.sid=s%3A<id>.peer) unless the cookie names one;
                      answers {"loggedIn", "userName"?, "sessionId"}
  GET  /debug         {"handshakeCookies": [...], "sessionIds": [...]}: what the socket side received
Socket.IO namespace "/":
  connect             records the handshake's Cookie header; emits "connected" {socketId} and
                      "serverNotice" (an event the plan does not name) from the connect handler, so
                      both are sent before the connect reply
  setSessionId {expressSessionId}   recorded
  login {userName, ...}             loginSuccess {userName, gender, age, country}; userList to all
  message {message, messageId, toUserName?}   messageSent {messageId}; "/help" without toUserName
                                    answers commandResult "help"
"""

import argparse
import asyncio
import os
import signal
import socket
import uuid
from urllib.parse import unquote

import socketio
from aiohttp import web

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script


def main():
    peer_lifeline.install()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    sio = socketio.AsyncServer(async_mode="aiohttp")
    app = web.Application()
    sio.attach(app)
    sessions = {}
    users = {}
    handshake_cookies = []
    session_ids = []

    def session_from(request):
        value = unquote(request.cookies.get("connect.sid", ""))
        if value.startswith("s:") and value.endswith(".peer"):
            sid = value[2:-5]
            if sid in sessions:
                return sid
        return None

    async def api_session(request):
        sid = session_from(request)
        if sid is not None:
            user = sessions[sid]
            body = {"loggedIn": user is not None, "sessionId": sid}
            if user:
                body["userName"] = user
            return web.json_response(body)
        sid = uuid.uuid4().hex
        sessions[sid] = None
        response = web.json_response({"loggedIn": False, "sessionId": sid})
        response.headers["Set-Cookie"] = f"connect.sid=s%3A{sid}.peer; Path=/; HttpOnly"
        return response

    async def debug(request):
        return web.json_response({"handshakeCookies": handshake_cookies, "sessionIds": session_ids})

    app.router.add_get("/api/session", api_session)
    app.router.add_get("/debug", debug)
    bound = {}

    @sio.event
    async def connect(sid, environ, auth):
        handshake_cookies.append(environ.get("HTTP_COOKIE"))
        await sio.emit("connected", {"socketId": sid}, to=sid)
        await sio.emit("serverNotice", {"text": "peer"}, to=sid)

    @sio.event
    async def disconnect(sid, *reason):
        bound.pop(sid, None)

    @sio.on("setSessionId")
    async def set_session_id(sid, data):
        session_ids.append((data or {}).get("expressSessionId"))
        bound[sid] = (data or {}).get("expressSessionId")

    @sio.on("login")
    async def login(sid, data):
        name = data.get("userName", "")
        users[sid] = {k: data.get(k) for k in ("userName", "gender", "age", "country")}
        express = data.get("expressSessionId") or bound.get(sid)
        if express in sessions:
            sessions[express] = name
        await sio.emit("loginSuccess", users[sid], to=sid)
        await sio.emit("userList", list(users.values()))

    @sio.on("message")
    async def message(sid, data):
        if data.get("toUserName") is None and data.get("message", "").startswith("/"):
            await sio.emit("commandResult", "help", to=sid)
            return
        await sio.emit("messageSent", {"messageId": data.get("messageId")}, to=sid)

    async def run():
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", args.port))
        site = web.SockSite(runner, listener)
        await site.start()
        print(f"READY {listener.getsockname()[1]}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        await stop.wait()
        os._exit(0)

    asyncio.run(run())


if __name__ == "__main__":
    main()

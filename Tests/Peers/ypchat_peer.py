#!/usr/bin/env python3
"""A YpChat server on python-socketio 5.x + aiohttp, for Tidings' YpChat interop tests: the plan's
REST table and Socket.IO events once more, on a Socket.IO server nobody here wrote.

Usage: ypchat_peer.py --port 0 [--admin-password peer-admin]

Binds 127.0.0.1 only and prints `READY <port>` once it accepts connections. REST and Socket.IO share
the port, as on the real server. Payload fields come from the shared fixtures in
Tests/Fixtures/ypchat/: countries.json and partners.json are the data served, and users, messages and
conversation summaries are written with the fields of user.json, message.json and
conversation-summary.json.

REST (cookie session connect.sid=s%3A<id>.peer):
  GET  /api/session        creates a session unless the cookie names one; {"loggedIn","userName"?,"sessionId"}
  POST /api/logout         forgets the session, expires the cookie
  GET  /api/countries      countries.json as it is (its key order is the server's)
  GET  /api/partners       partners.json
  GET/POST /api/feedback   list / add ({name?, message}; empty message: 400)
  GET  /api/feedback/admin-status, POST admin-login {password} (401 if wrong), POST admin-logout
  DELETE /api/feedback/{id}  admin sessions only (403), 404 for an unknown id
  POST /api/upload-image   multipart field "image", at most 5*1024*1024 bytes (413), answers {"url": "/uploads/<n>"}
  GET  /uploads/<n>        the stored bytes, for a known session only (401 otherwise)
  GET  /debug              {"handshakeCookies", "sessionIds"}: what the socket side received
  POST /debug/emit         {"toUser", "event", "args"}: sends that event as it is to the user's sockets
  POST /debug/advance      {"seconds"}: moves the inactivity rule's virtual clock forward
Socket.IO namespace "/":
  connect                  records the Cookie header; emits "connected" {socketId} and "serverNotice"
                           (an event the plan does not name) from the connect handler, before the reply
  setSessionId {expressSessionId}  binds the socket; a session logged in already logs the socket in
                           (loginSuccess)
  login                    nickname >= 3 characters, not used by another session; loginSuccess, userList to all
  message                  with toUserName: delivered unless blocked, messageSent {messageId} to the sender,
                           unreadChats {count} to the recipient; without: a console command
                           (/help commandResult, /users commandTable, /whoami commandResult, else error)
  requestConversation {withUserName}  conversation {withUserName, messages}, marks them read
  requestHistory           historyResults [summary]
  requestOpenConversations inboxResults [summary with unread], unreadChats {count}
  userSearch {nameIncludes, minAge, maxAge, countries, genders}  searchResults [user]
  blockUser / unblockUser {userName}  userBlocked / userUnblocked {userName}
  anything before login    error {message: "not logged in"}
  inactivity               a user who sent nothing for more than 30 minutes (on a virtual clock that only
                           /debug/advance moves) is logged out when the next event arrives: the session
                           forgets the user, its sockets get error {message: "logged out after 30 minutes
                           without activity"}, everyone a new userList
"""

import argparse
import json
import os
import signal
import uuid
from urllib.parse import unquote

import socketio
from aiohttp import web

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script
import aiohttp_serve  # Tests/Peers/aiohttp_serve.py, beside this script

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "ypchat")
MAX_IMAGE_BYTES = 5 * 1024 * 1024
INACTIVITY_LIMIT = 1800


def fixture_text(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def fixture_keys(name):
    return list(json.loads(fixture_text(name)).keys())


def main():
    peer_lifeline.install()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--admin-password", default="peer-admin")
    args = parser.parse_args()

    countries_json = fixture_text("countries.json")
    partners = json.loads(fixture_text("partners.json"))
    user_keys = fixture_keys("user.json")
    message_keys = [k for k in fixture_keys("message.json")] + [
        k for k in fixture_keys("image-message.json") if k not in fixture_keys("message.json")
    ]
    summary_keys = fixture_keys("conversation-summary.json")

    sio = socketio.AsyncServer(async_mode="aiohttp")
    app = web.Application(client_max_size=MAX_IMAGE_BYTES + 64 * 1024)
    sio.attach(app)
    sessions = {}  # express session id -> {"user": name or None, "admin": bool}
    profiles = {}  # user name -> profile dict
    sockets = {}  # sid -> {"session": id or None, "user": name or None}
    messages = []  # [{"message": dict, "read": bool}]
    blocks = {}  # user -> set of users
    feedback = []
    images = {}
    counters = {"feedback": 1, "image": 1, "timestamp": 1}
    clock = {"now": 0}
    last_activity = {}  # user name -> clock["now"] of the user's last event
    handshake_cookies = []
    session_ids = []

    def session_from(request):
        value = unquote(request.cookies.get("connect.sid", ""))
        if value.startswith("s:") and value.endswith(".peer"):
            sid = value[2:-5]
            if sid in sessions:
                return sid
        return None

    def shaped(values, keys):
        return {k: values[k] for k in keys if values.get(k) is not None}

    def error(message, status):
        return web.json_response({"error": message}, status=status)

    async def api_session(request):
        sid = session_from(request)
        if sid is not None:
            user = sessions[sid]["user"]
            body = {"loggedIn": user is not None, "sessionId": sid}
            if user:
                body["userName"] = user
            return web.json_response(body)
        sid = uuid.uuid4().hex
        sessions[sid] = {"user": None, "admin": False}
        response = web.json_response({"loggedIn": False, "sessionId": sid})
        response.headers["Set-Cookie"] = f"connect.sid=s%3A{sid}.peer; Path=/; HttpOnly"
        return response

    async def api_logout(request):
        sid = session_from(request)
        if sid is not None:
            name = sessions.pop(sid)["user"]
            for entry in sockets.values():
                if entry["session"] == sid:
                    entry["user"] = None
            if name and not any(e["user"] == name for e in sockets.values()):
                profiles.pop(name, None)
                await broadcast_user_list()
        response = web.json_response({"ok": True})
        response.headers["Set-Cookie"] = "connect.sid=; Path=/; Max-Age=0"
        return response

    async def api_countries(request):
        return web.Response(text=countries_json, content_type="application/json")

    async def api_partners(request):
        return web.json_response(partners)

    async def api_feedback(request):
        return web.json_response(feedback)

    async def api_feedback_post(request):
        try:
            body = await request.json()
        except ValueError:
            return error("invalid JSON", 400)
        text = str(body.get("message") or "").strip()
        if not text:
            return error("message required", 400)
        entry = {"id": str(counters["feedback"]), "message": text}
        if body.get("name"):
            entry["name"] = body["name"]
        counters["feedback"] += 1
        feedback.append(entry)
        return web.json_response(entry, status=201)

    async def admin_status(request):
        sid = session_from(request)
        return web.json_response({"isAdmin": bool(sid and sessions[sid]["admin"])})

    async def admin_login(request):
        sid = session_from(request)
        if sid is None:
            return error("no session", 401)
        try:
            body = await request.json()
        except ValueError:
            body = {}
        if body.get("password") != args.admin_password:
            return error("wrong password", 401)
        sessions[sid]["admin"] = True
        return web.json_response({"isAdmin": True})

    async def admin_logout(request):
        sid = session_from(request)
        if sid is not None:
            sessions[sid]["admin"] = False
        return web.json_response({"isAdmin": False})

    async def delete_feedback(request):
        sid = session_from(request)
        if sid is None or not sessions[sid]["admin"]:
            return error("admin only", 403)
        ident = request.match_info["id"]
        for index, entry in enumerate(feedback):
            if entry["id"] == ident:
                del feedback[index]
                return web.json_response({"ok": True})
        return error("no such feedback", 404)

    async def upload_image(request):
        if request.content_length is not None and request.content_length > MAX_IMAGE_BYTES + 64 * 1024:
            return error("image too large", 413)
        try:
            reader = await request.multipart()
        except (ValueError, AssertionError):
            return error("multipart field image required", 400)
        async for part in reader:
            if part.name == "image":
                data = await part.read()
                if len(data) > MAX_IMAGE_BYTES:
                    return error("image too large", 413)
                name = str(counters["image"])
                counters["image"] += 1
                images[name] = (part.headers.get("Content-Type", "application/octet-stream"), data)
                return web.json_response({"url": f"/uploads/{name}"})
        return error("multipart field image required", 400)

    async def uploaded(request):
        if session_from(request) is None:
            return error("no session", 401)
        stored = images.get(request.match_info["name"])
        if stored is None:
            return error("not found", 404)
        return web.Response(body=stored[1], content_type=stored[0])

    async def debug(request):
        return web.json_response({"handshakeCookies": handshake_cookies, "sessionIds": session_ids})

    async def debug_emit(request):
        body = await request.json()
        for sid, entry in list(sockets.items()):
            if entry["user"] == body["toUser"]:
                await sio.emit(body["event"], tuple(body.get("args", [])), to=sid)
        return web.json_response({"ok": True})

    async def debug_advance(request):
        body = await request.json()
        clock["now"] += int(body.get("seconds", 0))
        return web.json_response({"now": clock["now"]})

    async def expire_inactive():
        expired = [name for name, at in last_activity.items() if clock["now"] - at > INACTIVITY_LIMIT]
        for name in expired:
            del last_activity[name]
            for session in sessions.values():
                if session["user"] == name:
                    session["user"] = None
            for sid, entry in list(sockets.items()):
                if entry["user"] == name:
                    entry["user"] = None
                    await sio.emit("error", {"message": "logged out after 30 minutes without activity"}, to=sid)
        if expired:
            await broadcast_user_list()

    app.router.add_get("/api/session", api_session)
    app.router.add_post("/api/logout", api_logout)
    app.router.add_get("/api/countries", api_countries)
    app.router.add_get("/api/partners", api_partners)
    app.router.add_get("/api/feedback", api_feedback)
    app.router.add_post("/api/feedback", api_feedback_post)
    app.router.add_get("/api/feedback/admin-status", admin_status)
    app.router.add_post("/api/feedback/admin-login", admin_login)
    app.router.add_post("/api/feedback/admin-logout", admin_logout)
    app.router.add_delete("/api/feedback/{id}", delete_feedback)
    app.router.add_post("/api/upload-image", upload_image)
    app.router.add_get("/uploads/{name}", uploaded)
    app.router.add_get("/debug", debug)
    app.router.add_post("/debug/emit", debug_emit)
    app.router.add_post("/debug/advance", debug_advance)

    def user_payload(name):
        return shaped(profiles.get(name, {"userName": name}), user_keys)

    async def broadcast_user_list():
        online = sorted({e["user"] for e in sockets.values() if e["user"]})
        payload = [user_payload(name) for name in online]
        for sid, entry in list(sockets.items()):
            if entry["user"]:
                await sio.emit("userList", payload, to=sid)

    async def emit_to_user(name, event, payload):
        for sid, entry in list(sockets.items()):
            if entry["user"] == name:
                await sio.emit(event, payload, to=sid)

    async def bind(sid, name):
        for other, entry in sockets.items():
            if other != sid and entry["user"] == name:
                entry["user"] = None
        sockets[sid]["user"] = name
        last_activity[name] = clock["now"]
        await sio.emit("loginSuccess", user_payload(name), to=sid)
        await broadcast_user_list()

    def summaries(me, unread_only):
        order, result = [], {}
        for stored in messages:
            m = stored["message"]
            if me not in (m["fromUserName"], m.get("toUserName")):
                continue
            partner = m["toUserName"] if m["fromUserName"] == me else m["fromUserName"]
            if partner not in result:
                order.append(partner)
                result[partner] = {"userName": partner, "unreadCount": 0}
            result[partner]["lastMessage"] = "[image]" if m.get("isImage") else m["message"]
            if m.get("toUserName") == me and not stored["read"]:
                result[partner]["unreadCount"] += 1
        lines = [result[p] for p in order if not unread_only or result[p]["unreadCount"] > 0]
        return [shaped(line, summary_keys) for line in lines]

    @sio.event
    async def connect(sid, environ, auth):
        handshake_cookies.append(environ.get("HTTP_COOKIE"))
        sockets[sid] = {"session": None, "user": None}
        await sio.emit("connected", {"socketId": sid}, to=sid)
        await sio.emit("serverNotice", {"text": "peer"}, to=sid)

    @sio.event
    async def disconnect(sid, *reason):
        entry = sockets.pop(sid, None)
        if entry and entry["user"]:
            await broadcast_user_list()

    @sio.on("setSessionId")
    async def set_session_id(sid, data):
        await expire_inactive()
        express = (data or {}).get("expressSessionId") if isinstance(data, dict) else None
        session_ids.append(express)
        sockets[sid]["session"] = express
        if express in sessions and sessions[express]["user"]:
            await bind(sid, sessions[express]["user"])

    @sio.on("login")
    async def login(sid, data):
        await expire_inactive()
        data = data if isinstance(data, dict) else {}
        name = str(data.get("userName") or "").strip()
        if len(name) < 3:
            await sio.emit("error", {"message": "nickname needs at least 3 characters"}, to=sid)
            return
        express = data.get("expressSessionId") or sockets[sid]["session"]
        for other, entry in sockets.items():
            if other != sid and entry["user"] == name and (entry["session"] is None or entry["session"] != express):
                await sio.emit("error", {"message": "nickname taken"}, to=sid)
                return
        profiles[name] = {"userName": name, "gender": data.get("gender"), "age": data.get("age"),
                          "country": data.get("country")}
        if express in sessions:
            sessions[express]["user"] = name
        await bind(sid, name)

    async def active_user(sid):
        # The user of the socket after the inactivity rule, marked active now; None when not logged in.
        await expire_inactive()
        name = sockets.get(sid, {}).get("user")
        if name is not None:
            last_activity[name] = clock["now"]
        return name

    async def not_logged_in(sid):
        await sio.emit("error", {"message": "not logged in"}, to=sid)

    @sio.on("message")
    async def message(sid, data):
        me = await active_user(sid)
        if me is None:
            return await not_logged_in(sid)
        data = data if isinstance(data, dict) else {}
        text = str(data.get("message") or "")
        recipient = data.get("toUserName")
        if recipient is None:
            command = text.split(" ")[0]
            if command == "/help":
                await sio.emit("commandResult", {"result": "Befehle: /help, /users, /whoami"}, to=sid)
            elif command == "/users":
                online = sorted({e["user"] for e in sockets.values() if e["user"]})
                rows = [[n, str(profiles.get(n, {}).get("age") or ""), profiles.get(n, {}).get("country") or ""]
                        for n in online]
                await sio.emit("commandTable", {"columns": ["userName", "age", "country"], "rows": rows}, to=sid)
            elif command == "/whoami":
                p = profiles.get(me, {})
                await sio.emit("commandResult", {"result": f"{me}\n{p.get('age', '?')} {p.get('country', '?')}"},
                               to=sid)
            else:
                await sio.emit("error", {"message": "unknown command"}, to=sid)
            return
        if recipient not in profiles or not any(e["user"] == recipient for e in sockets.values()):
            await sio.emit("error", {"message": f"unknown user {recipient}"}, to=sid)
            return
        is_image = bool(data.get("isImage"))
        stored = {"messageId": data.get("messageId"), "fromUserName": me, "toUserName": recipient,
                  "message": text, "isImage": True if is_image else None,
                  "imageUrl": data.get("imageUrl") if is_image else None,
                  "timestamp": str(counters["timestamp"])}
        counters["timestamp"] += 1
        stored = shaped(stored, message_keys)
        if me not in blocks.get(recipient, set()):
            messages.append({"message": stored, "read": False})
            await emit_to_user(recipient, "message", stored)
            await emit_to_user(recipient, "unreadChats", {"count": len(summaries(recipient, True))})
        if data.get("messageId") is not None:
            await sio.emit("messageSent", {"messageId": data.get("messageId")}, to=sid)

    @sio.on("requestConversation")
    async def request_conversation(sid, data):
        me = await active_user(sid)
        if me is None:
            return await not_logged_in(sid)
        partner = (data or {}).get("withUserName") if isinstance(data, dict) else None
        if not partner:
            return await sio.emit("error", {"message": "withUserName"}, to=sid)
        between = [s for s in messages
                   if {s["message"]["fromUserName"], s["message"].get("toUserName")} == {me, partner}]
        for s in between:
            if s["message"].get("toUserName") == me:
                s["read"] = True
        await sio.emit("conversation", {"withUserName": partner, "messages": [s["message"] for s in between]}, to=sid)

    @sio.on("requestHistory")
    async def request_history(sid, *data):
        me = await active_user(sid)
        if me is None:
            return await not_logged_in(sid)
        await sio.emit("historyResults", summaries(me, False), to=sid)

    @sio.on("requestOpenConversations")
    async def request_open(sid, *data):
        me = await active_user(sid)
        if me is None:
            return await not_logged_in(sid)
        open_lines = summaries(me, True)
        await sio.emit("inboxResults", open_lines, to=sid)
        await sio.emit("unreadChats", {"count": len(open_lines)}, to=sid)

    @sio.on("userSearch")
    async def user_search(sid, data):
        me = await active_user(sid)
        if me is None:
            return await not_logged_in(sid)
        data = data if isinstance(data, dict) else {}
        needle = str(data.get("nameIncludes") or "").lower()
        low, high = int(data.get("minAge") or 0), int(data.get("maxAge") or 1000)
        countries, genders = set(data.get("countries") or []), set(data.get("genders") or [])
        online = sorted({e["user"] for e in sockets.values() if e["user"]} - {me})
        found = []
        for name in online:
            p = profiles.get(name, {})
            age = p.get("age") if isinstance(p.get("age"), int) else low
            if needle and needle not in name.lower():
                continue
            if not low <= age <= max(low, high):
                continue
            if countries and p.get("country") not in countries:
                continue
            if genders and p.get("gender") not in genders:
                continue
            found.append(user_payload(name))
        await sio.emit("searchResults", found, to=sid)

    async def block_change(sid, data, blocked):
        me = await active_user(sid)
        if me is None:
            return await not_logged_in(sid)
        user = (data or {}).get("userName") if isinstance(data, dict) else None
        if not user:
            return await sio.emit("error", {"message": "userName"}, to=sid)
        if blocked:
            blocks.setdefault(me, set()).add(user)
        else:
            blocks.get(me, set()).discard(user)
        await sio.emit("userBlocked" if blocked else "userUnblocked", {"userName": user}, to=sid)

    @sio.on("blockUser")
    async def block_user(sid, data):
        await block_change(sid, data, True)

    @sio.on("unblockUser")
    async def unblock_user(sid, data):
        await block_change(sid, data, False)

    aiohttp_serve.serve(app, args.port)


if __name__ == "__main__":
    main()

"""HTTP/1.1 transport peer: an aiohttp server on 127.0.0.1 for the tests of HTTPClient's own transport
(Tests/InteropTests/HTTPTransportInteropTests.swift): keep-alive, connections the server drops, chunked bodies,
a server that never answers, redirect method rules.

Usage: http_transport_peer.py --port 0   (prints `READY <port>` once listening)

Routes (every answer is JSON unless said otherwise):
  ANY  /echo                     {"method", "body_length", "content_type", "connection": the client's port,
                                  "headers": [[name, value], ...]}
  GET  /drop-next                marks this connection: the next request on it is read and then the connection
                                 is closed without an answer (a server dropping a kept-alive connection)
  ANY  /count?key=K              {"count": how many requests /count saw for K}; a request on a marked connection
                                 is counted before the connection is dropped
  GET  /chunked?bytes=N&chunk=C  N bytes (b"0123456789" repeated), chunked, C bytes per chunk
  GET  /hold?key=K               never answers; /held?key=K reports {"arrived": bool, "closed": bool} for it
  GET  /held?key=K[&wait=arrived|closed]
                                 see /hold; with wait, answers once that is true (at most 30 s), so a test never
                                 polls
  ANY  /redirect?status=S&to=P   answers S with Location P (relative or absolute)
  GET  /redirect-loop            302 to itself
"""

import argparse
import asyncio

from aiohttp import web

import aiohttp_serve  # Tests/Peers/aiohttp_serve.py, beside this script
import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script

COUNTS = {}
HELD = {}
MARKED = set()


def client_port(request):
    peer = request.transport.get_extra_info("peername") if request.transport else None
    return peer[1] if peer else 0


@web.middleware
async def drop_marked(request, handler):
    transport = request.transport
    if transport is not None and id(transport) in MARKED:
        MARKED.discard(id(transport))
        await request.read()
        if request.path == "/count":
            key = request.query.get("key", "")
            COUNTS[key] = COUNTS.get(key, 0) + 1
        transport.close()
        # The connection is gone: aiohttp's attempt to write this answer fails quietly.
        return web.Response()
    return await handler(request)


async def echo(request):
    body = await request.read()
    return web.json_response(
        {
            "method": request.method,
            "body_length": len(body),
            "content_type": request.headers.get("Content-Type"),
            "connection": client_port(request),
            "headers": [[name, value] for name, value in request.headers.items()],
        }
    )


async def drop_next(request):
    MARKED.add(id(request.transport))
    return web.json_response({"connection": client_port(request)})


async def count(request):
    await request.read()
    key = request.query.get("key", "")
    COUNTS[key] = COUNTS.get(key, 0) + 1
    return web.json_response({"count": COUNTS[key]})


async def chunked(request):
    total = int(request.query["bytes"])
    size = int(request.query.get("chunk", "1000"))
    pattern = b"0123456789" * (size // 10 + 1)
    response = web.StreamResponse()
    response.content_type = "application/octet-stream"
    response.enable_chunked_encoding()
    await response.prepare(request)
    sent = 0
    while sent < total:
        piece = pattern[: min(size, total - sent)]
        await response.write(piece)
        sent += len(piece)
    await response.write_eof()
    return response


async def hold(request):
    key = request.query.get("key", "")
    state = HELD.setdefault(key, {"arrived": False, "closed": False})
    state["arrived"] = True
    transport = request.transport
    # aiohttp no longer cancels a handler whose client left, so the server watches its own socket.
    while transport is not None and not transport.is_closing():
        await asyncio.sleep(0.01)
    state["closed"] = True
    return web.json_response({})


async def held(request):
    key = request.query.get("key", "")
    wait = request.query.get("wait")
    for _ in range(3000):
        state = HELD.get(key, {"arrived": False, "closed": False})
        if wait is None or state.get(wait):
            break
        await asyncio.sleep(0.01)
    return web.json_response(HELD.get(key, {"arrived": False, "closed": False}))


async def redirect(request):
    await request.read()
    status = int(request.query["status"])
    return web.Response(status=status, headers={"Location": request.query["to"]})


async def redirect_loop(request):
    raise web.HTTPFound("/redirect-loop")


def main():
    peer_lifeline.install()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    app = web.Application(middlewares=[drop_marked])
    app.add_routes(
        [
            web.route("*", "/echo", echo),
            web.get("/drop-next", drop_next),
            web.route("*", "/count", count),
            web.get("/chunked", chunked),
            web.get("/hold", hold),
            web.get("/held", held),
            web.route("*", "/redirect", redirect),
            web.get("/redirect-loop", redirect_loop),
        ]
    )
    aiohttp_serve.serve(app, args.port)


if __name__ == "__main__":
    main()

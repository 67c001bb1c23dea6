"""HTTP test peer: an aiohttp server on 127.0.0.1 for the HTTP client's interop tests.

Usage: http_peer.py --port 0 [--tls-cert server.pem --tls-key server.key]
       (prints `READY <port>` once listening; with --tls-cert it serves HTTPS, so `/redirect-to-port` is an
       https -> http downgrade)

Routes:
  GET  /cookies/set?name=N&value=V[&max_age=S]  sets one cookie (Max-Age when given)
  GET  /cookies/set-two                          sets two cookies in one response, one with an Expires date
  GET  /cookies                                  the cookies the request carried, as JSON
  GET  /redirect                                 302 to /cookies, setting cookie `hop=1` on the way
  GET  /redirect-to-localhost                    302 to http://localhost:<port>/headers (another host name)
  GET  /redirect-to-port?port=P                   302 to http://127.0.0.1:P/headers (same host, another port)
  GET  /cookies/set-domain?name=N&domain=D        sets cookie N=1 with Domain=D
  GET  /cookies/set-domains?domain=D[&domain=D2]  raw Set-Cookie fields `dom-D=<host>; Domain=D; Path=/`, one per D,
                                                 plus a host-only `host-only=<host>; Path=/`; answers {"host": Host}
  GET  /cookies/raw                               {"host": the Host header, "cookie": the Cookie header or null}
  GET  /headers-raw                               every request header, as a JSON list of [name, value]
  POST /multipart                                what aiohttp parsed: fields and files (name, size, sha256, type)
  POST /form                                     the parsed form fields as a JSON list of pairs
  GET  /ratelimited                              429 with Retry-After: 120 and X-RateLimit-* headers
  GET  /error                                    422 with {"error": "Validation failed: text is too long"}
  GET  /json                                     {"items": [...]} whose second item has a bad `count`
  GET  /slow                                     answers after 60 s
  GET  /headers                                  Authorization, User-Agent and the query string, as JSON
  GET  /page                                     a Link header with next and prev
  GET  /large[?bytes=N][&chunk=C][&pace_ms=P][&declare=1]
                                                 N bytes of body (endless without N) in chunks of C bytes (64 KiB),
                                                 waiting P ms after each chunk; chunked, or with Content-Length: N
                                                 when declare=1; with tag=T, /large-sent?tag=T reports its bytes
  GET  /large-sent?tag=T                         {"sent": body bytes the tagged /large wrote, "ended": bool}, once
                                                 that response has ended (the client left or the body was done;
                                                 at most 30 s)
  GET  /declared-then-hold?length=N              headers with Content-Length: N, then no body: holds the response
                                                 open until the client leaves (only a client that judges the
                                                 header alone answers before its timeout)
"""

import argparse
import asyncio
import hashlib
import os
import signal
import ssl

from aiohttp import web

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script


async def set_cookie(request):
    response = web.json_response({})
    max_age = request.query.get("max_age")
    response.set_cookie(
        request.query["name"], request.query["value"], max_age=int(max_age) if max_age else None, path="/"
    )
    return response


async def set_two(request):
    response = web.json_response({})
    response.set_cookie("first", "1", path="/")
    response.set_cookie("second", "2", path="/", expires="Fri, 01 Jan 2100 00:00:00 GMT")
    return response


async def cookies(request):
    return web.json_response(dict(request.cookies))


async def redirect(request):
    response = web.HTTPFound("/cookies")
    response.set_cookie("hop", "1", path="/")
    raise response


async def redirect_to_localhost(request):
    raise web.HTTPFound(f"http://localhost:{request.url.port}/headers")


async def redirect_to_port(request):
    raise web.HTTPFound(f"http://127.0.0.1:{int(request.query['port'])}/headers")


async def set_cookie_domain(request):
    response = web.json_response({})
    response.set_cookie(request.query["name"], "1", domain=request.query["domain"], path="/")
    return response


async def set_cookie_domains(request):
    # Written as raw fields, not through aiohttp's cookie helper: the test decides exactly what is on the wire.
    host = request.host.split(":")[0]
    response = web.json_response({"host": request.host})
    for domain in request.query.getall("domain", []):
        response.headers.add("Set-Cookie", f"dom-{domain}={host}; Domain={domain}; Path=/")
    response.headers.add("Set-Cookie", f"host-only={host}; Path=/")
    return response


async def raw_cookies(request):
    return web.json_response({"host": request.host, "cookie": request.headers.get("Cookie")})


async def headers_raw(request):
    return web.json_response([[name, value] for name, value in request.headers.items()])


async def multipart(request):
    reader = await request.multipart()
    fields, files = {}, {}
    async for part in reader:
        data = await part.read(decode=False)
        if part.filename is None:
            fields[part.name] = data.decode("utf-8")
        else:
            files[part.name] = {
                "filename": part.filename,
                "content_type": part.headers.get("Content-Type"),
                "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest(),
            }
    return web.json_response({"fields": fields, "files": files})


async def form(request):
    data = await request.post()
    return web.json_response([[key, value] for key, value in data.items()])


async def ratelimited(request):
    return web.json_response(
        {"error": "Too many requests"},
        status=429,
        headers={"Retry-After": "120", "X-RateLimit-Limit": "300", "X-RateLimit-Remaining": "0"},
    )


async def error(request):
    return web.json_response({"error": "Validation failed: text is too long"}, status=422)


async def json_items(request):
    return web.json_response({"items": [{"id": "1", "count": 2}, {"id": "2", "count": "three"}]})


async def slow(request):
    await asyncio.sleep(60)
    return web.json_response({})


async def headers(request):
    return web.json_response(
        {
            "authorization": request.headers.get("Authorization"),
            "user_agent": request.headers.get("User-Agent"),
            "query": request.query_string,
        }
    )


async def page(request):
    base = f"http://{request.host}/page"
    return web.json_response(
        [], headers={"Link": f'<{base}?max_id=100>; rel="next", <{base}?min_id=200>; rel="prev"'}
    )


# Per `tag`: the body bytes /large has written so far, and an event set once its response has ended.
LARGE_SENT = {}
LARGE_ENDED = {}


async def large(request):
    # Streamed chunk by chunk, so a client that stops reading early stops the server too (TCP back-pressure).
    remaining = int(request.query["bytes"]) if "bytes" in request.query else None
    chunk = b"x" * int(request.query.get("chunk", "65536"))
    pace = float(request.query.get("pace_ms", "0")) / 1000
    tag = request.query.get("tag")
    if tag is not None:
        LARGE_SENT[tag] = 0
        LARGE_ENDED.setdefault(tag, asyncio.Event())
    response = web.StreamResponse()
    response.content_type = "application/octet-stream"
    if remaining is not None and request.query.get("declare") == "1":
        response.content_length = remaining
    await response.prepare(request)
    try:
        while remaining is None or remaining > 0:
            piece = chunk if remaining is None or remaining >= len(chunk) else chunk[:remaining]
            await response.write(piece)
            if tag is not None:
                LARGE_SENT[tag] += len(piece)
            if remaining is not None:
                remaining -= len(piece)
            if pace:
                await asyncio.sleep(pace)
        await response.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        if tag is not None:
            LARGE_ENDED[tag].set()
    return response


async def large_sent(request):
    # Waits (at most 30 s) for the tagged /large response to end, so the count is final.
    tag = request.query["tag"]
    ended = LARGE_ENDED.setdefault(tag, asyncio.Event())
    try:
        await asyncio.wait_for(ended.wait(), 30)
    except asyncio.TimeoutError:
        pass
    return web.json_response({"sent": LARGE_SENT.get(tag, 0), "ended": ended.is_set()})


async def declared_then_hold(request):
    response = web.StreamResponse()
    response.content_type = "application/octet-stream"
    response.content_length = int(request.query["length"])
    await response.prepare(request)
    await asyncio.sleep(3600)
    return response


async def main():
    peer_lifeline.install()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
    app = web.Application()
    app.add_routes(
        [
            web.get("/cookies/set", set_cookie),
            web.get("/cookies/set-two", set_two),
            web.get("/cookies", cookies),
            web.get("/redirect", redirect),
            web.get("/redirect-to-localhost", redirect_to_localhost),
            web.get("/redirect-to-port", redirect_to_port),
            web.get("/cookies/set-domain", set_cookie_domain),
            web.get("/cookies/set-domains", set_cookie_domains),
            web.get("/cookies/raw", raw_cookies),
            web.get("/headers-raw", headers_raw),
            web.post("/multipart", multipart),
            web.post("/form", form),
            web.get("/ratelimited", ratelimited),
            web.get("/error", error),
            web.get("/json", json_items),
            web.get("/slow", slow),
            web.get("/headers", headers),
            web.get("/page", page),
            web.get("/large", large),
            web.get("/declared-then-hold", declared_then_hold),
            web.get("/large-sent", large_sent),
        ]
    )
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port, ssl_context=context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"READY {port}", flush=True)
    stop = asyncio.get_running_loop().create_future()
    # Exit at once on SIGTERM: a graceful close would wait for every client's closing handshake.
    # A parent that spawns us from a Swift (libdispatch) thread passes on its blocked-signal mask, so
    # SIGTERM must be unblocked first or it would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    await stop
    await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(main())

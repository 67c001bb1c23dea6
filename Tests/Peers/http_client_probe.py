#!/usr/bin/env python3
"""aiohttp's client against a Tidings sandbox HTTP server (TidingsSandboxKit's test routes).

Usage: http_client_probe.py --url http://127.0.0.1:PORT

Exercises JSON, form and multipart bodies, cookies, Link and rate-limit headers, a chunked response and a
429 with Retry-After, checking each answer; prints `OK <checks>` and exits 0, or `FAIL <what>` and exits 1.
"""

import argparse
import asyncio
import sys

import aiohttp


async def run(base):
    checks = 0

    def check(condition, what):
        nonlocal checks
        if not condition:
            raise AssertionError(what)
        checks += 1

    timeout = aiohttp.ClientTimeout(total=20)
    # unsafe=True: aiohttp's jar otherwise ignores cookies from IP-address hosts such as 127.0.0.1.
    async with aiohttp.ClientSession(timeout=timeout, cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
        async with session.get(f"{base}/api/v1/statuses/5", params={"q": "a b"}) as r:
            check(r.status == 200 and await r.json() == {"id": "5", "q": "a b"}, "path and query")
        async with session.post(f"{base}/api/v1/echo", json={"text": "žluť", "count": 3}) as r:
            check(r.status == 201 and await r.json() == {"text": "žluť", "count": 3}, "json echo")
        async with session.post(f"{base}/form", data={"a": "1 2", "b": "&="}) as r:
            check(await r.json() == {"a": "1 2", "b": "&="}, "form")
        form = aiohttp.FormData()
        form.add_field("status", "hi")
        form.add_field("media", b"\x00" * 50000, filename="m.bin", content_type="application/octet-stream")
        async with session.post(f"{base}/upload", data=form) as r:
            check(await r.json() == ["status||2", "media|m.bin|50000"], "multipart")
        async with session.get(f"{base}/me") as r:
            check(r.status == 401, "no session yet")
        async with session.post(f"{base}/login", data={"user": "py"}) as r:
            check(r.status == 200, "login")
        async with session.get(f"{base}/me") as r:
            check(await r.json() == {"session": "s-py"}, "session cookie sent back")
        async with session.get(f"{base}/timeline") as r:
            check(str(r.links["next"]["url"]).endswith("/timeline?max_id=1"), "Link next")
            check(r.headers["X-RateLimit-Remaining"] == "299", "rate-limit headers")
        async with session.get(f"{base}/stream") as r:
            check(r.headers.get("Transfer-Encoding") == "chunked", "chunked framing")
            check(await r.text() == "first,second,third", "chunked body")
        async with session.get(f"{base}/big") as r:
            check(r.status == 429 and r.headers["Retry-After"] == "7", "429 with Retry-After")
        async with session.get(f"{base}/big") as r:
            check(r.status == 200 and len(await r.read()) == 10000, "keep-alive after the fault")
    return checks


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    args = parser.parse_args()
    try:
        checks = asyncio.run(run(args.url.rstrip("/")))
    except Exception as error:  # noqa: BLE001 - the test reads the reason from the output
        print(f"FAIL {error!r}", flush=True)
        sys.exit(1)
    print(f"OK {checks}", flush=True)


if __name__ == "__main__":
    main()

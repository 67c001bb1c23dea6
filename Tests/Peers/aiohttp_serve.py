"""Serves an aiohttp app on loopback the way every Socket.IO peer here does: binds 127.0.0.1:port (0 = any),
prints "READY <port>" once listening, and on SIGTERM/SIGINT exits at once.

Exiting at once instead of aiohttp's graceful shutdown matters: that shutdown waits up to a minute for open
WebSockets, and tests stop peers from Swift concurrency threads that every other test needs back.
"""

import asyncio
import os
import signal
import socket

from aiohttp import web


def serve(app, port):
    async def run():
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
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

"""Baseline for `tidings-bench websocket`: the `websockets` library's own asyncio client running the
same workload as Tidings' client against ws_peer.py, printing one JSON line of figures.

Usage: ws_bench_client.py --url ws://127.0.0.1:PORT/echo [--ca ca.pem] --connects N --echoes N
       --pipelined N --big N
"""

import argparse
import asyncio
import json
import ssl
import time

from websockets.asyncio.client import connect


def percentile(samples, q):
    ordered = sorted(samples)
    return ordered[round(q * (len(ordered) - 1))]


async def pipelined_round(ws, count):
    """Sends `count` 32-byte texts from a second task while receiving their echoes; returns echoes per second."""
    start = time.perf_counter()

    async def sender():
        for index in range(count):
            await ws.send(f"pipe {index:027d}")

    task = asyncio.create_task(sender())
    for _ in range(count):
        await ws.recv()
    await task
    return count / (time.perf_counter() - start)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--ca")
    parser.add_argument("--connects", type=int, default=20)
    parser.add_argument("--echoes", type=int, default=1000)
    parser.add_argument("--pipelined", type=int, default=5000)
    parser.add_argument("--big", type=int, default=10)
    args = parser.parse_args()
    context = None
    if args.ca:
        context = ssl.create_default_context(cafile=args.ca)
    options = dict(ssl=context, max_size=None, ping_interval=None, compression=None)

    connect_ms = []
    for _ in range(args.connects):
        start = time.perf_counter()
        ws = await connect(args.url, **options)
        connect_ms.append((time.perf_counter() - start) * 1000)
        await ws.close()

    async with connect(args.url, **options) as ws:
        for _ in range(50):
            await ws.send("warm-up")
            await ws.recv()
        echo_ms = []
        for index in range(args.echoes):
            text = f"echo {index:027d}"
            start = time.perf_counter()
            await ws.send(text)
            await ws.recv()
            echo_ms.append((time.perf_counter() - start) * 1000)

        pipelined = await pipelined_round(ws, args.pipelined)

        blob = bytes((i * 7) & 0xFF for i in range(1 << 20))
        big_ms = []
        for _ in range(args.big):
            start = time.perf_counter()
            await ws.send(blob)
            reply = await ws.recv()
            big_ms.append((time.perf_counter() - start) * 1000)
            assert reply == blob

    print(
        json.dumps(
            {
                "connect_ms": percentile(connect_ms, 0.5),
                "echo_p50_ms": percentile(echo_ms, 0.5),
                "echo_p99_ms": percentile(echo_ms, 0.99),
                "pipelined_per_s": pipelined,
                "big_ms": percentile(big_ms, 0.5),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())

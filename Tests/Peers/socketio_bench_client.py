#!/usr/bin/env python3
"""The baseline of `tidings-bench socketio`: python-socketio's own AsyncClient (aiohttp transport).

Usage: socketio_bench_client.py --url http://127.0.0.1:PORT --transport websocket|polling
       [--connects 20] [--acks 1000] [--pipelined 2000] [--window 0] [--binary 20]

Runs the same workload as the Tidings client against socketio_server.py and prints one JSON object:
{"connect_ms", "ack_p50_ms", "ack_p99_ms", "pipelined_acks_per_s", "binary_64k_ms"} (medians/percentiles
by nearest rank, like BenchReporter.percentile).
"""

import argparse
import asyncio
import json
import time

import socketio


def percentile(samples, q):
    ordered = sorted(samples)
    rank = int(round(q * (len(ordered) - 1)))
    return ordered[min(max(rank, 0), len(ordered) - 1)]


async def run(args):
    transports = [args.transport]
    result = {}

    connects = []
    # The AsyncClient's disconnect over polling waits for the pending long poll (up to the ping
    # interval), so clients are disconnected together at the end, outside every measurement.
    opened = []
    for _ in range(args.connects):
        client = socketio.AsyncClient(reconnection=False)
        start = time.perf_counter()
        await client.connect(args.url, transports=transports, wait_timeout=10)
        connects.append((time.perf_counter() - start) * 1000)
        opened.append(client)
    result["connect_ms"] = percentile(connects, 0.5)

    client = socketio.AsyncClient(reconnection=False)
    await client.connect(args.url, transports=transports, wait_timeout=10)
    for i in range(50):  # warm-up
        await client.call("echo", i, timeout=10)

    rtts = []
    for i in range(args.acks):
        start = time.perf_counter()
        await client.call("echo", i, timeout=10)
        rtts.append((time.perf_counter() - start) * 1000)
    result["ack_p50_ms"] = percentile(rtts, 0.5)
    result["ack_p99_ms"] = percentile(rtts, 0.99)

    # A window of in-flight acks (0: all at once). Over polling python-socketio's own client refuses a
    # response with more than 16 packets, so it needs a window of at most 16 there.
    window = asyncio.Semaphore(args.window if args.window > 0 else args.pipelined)

    async def windowed(i):
        async with window:
            await client.call("echo", i, timeout=60)

    start = time.perf_counter()
    await asyncio.gather(*[windowed(i) for i in range(args.pipelined)])
    result["pipelined_acks_per_s"] = args.pipelined / (time.perf_counter() - start)

    blob = bytes((i * 7) & 0xFF for i in range(65536))
    binaries = []
    for _ in range(args.binary):
        start = time.perf_counter()
        reply = await client.call("echo", blob, timeout=10)
        binaries.append((time.perf_counter() - start) * 1000)
        if reply != blob:
            raise SystemExit("binary echo mismatch")
    result["binary_64k_ms"] = percentile(binaries, 0.5)

    print(json.dumps(result), flush=True)
    await asyncio.gather(*[c.disconnect() for c in opened + [client]])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--transport", choices=["websocket", "polling"], required=True)
    parser.add_argument("--connects", type=int, default=20)
    parser.add_argument("--acks", type=int, default=1000)
    parser.add_argument("--pipelined", type=int, default=2000)
    parser.add_argument("--binary", type=int, default=20)
    parser.add_argument("--window", type=int, default=0)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()

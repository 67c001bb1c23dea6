"""Baseline for `tidings-bench wscost`: the `websockets` asyncio client's pipelined-echo workload (the WS4/WS9
rows' workload, repeated), printing one JSON line with its rate and what the workload cost this process.

Usage: ws_pipeline_cost.py --url ws://127.0.0.1:PORT/echo [--ca ca.pem] --rounds N --pipelined N

The CPU time and context switches are this process's own (getrusage), taken around the pipelined rounds only;
the bench reads the server's CPU itself.
"""

import argparse
import asyncio
import json
import resource
import ssl

from websockets.asyncio.client import connect

from ws_bench_client import pipelined_round  # Tests/Peers/ws_bench_client.py, beside this script


def usage():
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime, own.ru_nvcsw + own.ru_nivcsw


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--ca")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--pipelined", type=int, default=5000)
    args = parser.parse_args()
    context = ssl.create_default_context(cafile=args.ca) if args.ca else None
    async with connect(args.url, ssl=context, max_size=None, ping_interval=None, compression=None) as ws:
        for _ in range(50):
            await ws.send("warm-up")
            await ws.recv()
        cpu_before, switches_before = usage()
        rates = []
        for _ in range(args.rounds):
            rates.append(await pipelined_round(ws, args.pipelined))
        cpu_after, switches_after = usage()
    rates.sort()
    print(
        json.dumps(
            {
                "per_s": rates[len(rates) // 2],
                "cpu_s": cpu_after - cpu_before,
                "switches": switches_after - switches_before,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())

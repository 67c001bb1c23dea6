"""A server that accepts TCP connections on 127.0.0.1 and then never reads or writes: the peer for
"a server that accepts and never answers" on every transport (ws, wss, Engine.IO, HTTPS).

Usage: silent_peer.py --port 0
Prints `READY <port>` once listening. Each accepted connection is held open, unread, until the client
closes it or the peer exits.
"""

import argparse
import asyncio

import peer_lifeline  # Tests/Peers/peer_lifeline.py, beside this script


async def main():
    peer_lifeline.install()
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    held = []

    def accepted(reader, writer):
        # Keep the transport referenced and do nothing with it: no read, no write, no close.
        held.append(writer)
        writer.transport.pause_reading()

    server = await asyncio.start_server(accepted, "127.0.0.1", args.port)
    port = server.sockets[0].getsockname()[1]
    print(f"READY {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())

"""Ties a test peer's life to the test process that started it.

Tests/PeerSupport starts every peer with TIDINGS_PEER_LIFELINE=stdin and a pipe as its standard input
whose other end only the test process holds. When that process ends, however it ends (a crash, a
SIGKILL from a CI timeout), the pipe reaches end-of-file and the peer exits at once, so no peer outlives
its tests. Run by hand (without the variable) a peer ignores its standard input.
"""

import os
import signal
import sys
import threading


def install():
    # A parent on a libdispatch thread may pass on a mask that blocks SIGTERM; the tests stop peers with it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    if os.environ.get("TIDINGS_PEER_LIFELINE") != "stdin":
        return

    def watch():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        finally:
            os._exit(0)

    threading.Thread(target=watch, name="lifeline", daemon=True).start()

"""The foreground loop of the command-line HTTP servers (`livesearch site serve`, `livesearch serve-web`)."""

from __future__ import annotations

from typing import Protocol


class _Server(Protocol):
    def serve_forever(self) -> None: ...

    def server_close(self) -> None: ...


def serve_until_interrupted(server: _Server) -> int:
    """Serve until Ctrl-C (KeyboardInterrupt) or until `serve_forever` returns, then close the
    listening socket whatever ended the loop (an error still propagates). Returns exit code 0."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0

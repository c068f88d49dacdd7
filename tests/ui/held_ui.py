"""`topobridge ui --from FILE` with one model computation held forever on the model's worker
thread (argv[1]: `first-build`, `rebuild`, `what-if` or `explain`), for the SIGTERM tests: the
held call prints `held` on stderr when it starts, and the interpreter's finalization, if it
runs, prints `finalized` there. Run as a script (`python held_ui.py STATE FILE`)."""

from __future__ import annotations

import atexit
import sys
import threading
from typing import Any

from topobridge import cli
from topobridge.ui import model, whatif

NEVER = threading.Event()


def held(original: Any, *, after: int = 0) -> Any:
    """`original`, but its call number `after` (from 0) blocks forever."""
    calls = 0

    def call(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls > after:
            print("held", file=sys.stderr, flush=True)
            NEVER.wait()
        return original(*args, **kwargs)

    return call


def main(state: str, path: str) -> int:
    atexit.register(print, "finalized", file=sys.stderr, flush=True)
    if state == "first-build":
        model.build = held(model.build)
    elif state == "what-if":
        whatif.what_if = held(whatif.what_if)
    elif state == "explain":
        model.explanation = held(model.explanation)
    else:
        raise SystemExit(f"unknown state {state!r}")
    return cli.main(["--log-level", "warning", "ui", "--port", "0", "--from", path])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

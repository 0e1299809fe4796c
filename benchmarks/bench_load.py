"""Classroom load: 30 students moving a control every 3 s for 60 s against one ``streamlit run``.

``python -m benchmarks load [--users N] [--seconds S] [--spawn-rate R] [--host http://127.0.0.1:PORT]
[--cold] [--json PATH]`` (or ``make bench`` / ``make bench-load``). The students are Locust users speaking
Streamlit's websocket protocol (``benchmarks/load/``); without ``--host`` a server is started on a
free loopback port and stopped afterwards. Prints p50 / p95 rerun latency, reruns/s, errors and the
server's peak RSS. Target (issue 8): p95 <= 1 s and 0 errors with 30 students.

The run happens in a child process (``python -m benchmarks.load``): Locust monkey-patches the
standard library with gevent, which must not leak into the other benchmarks of ``make bench``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: Sequence[str] = ()) -> None:
    returncode = subprocess.run([sys.executable, "-m", "benchmarks.load", *argv], cwd=ROOT).returncode
    if returncode:
        raise SystemExit(returncode)


if __name__ == "__main__":
    main(sys.argv[1:])

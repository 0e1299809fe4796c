"""``python -m benchmarks.load [options]``: the classroom load run in a process of its own."""

import locust  # noqa: F401, I001  (first: gevent monkey-patches the standard library)

import sys

from benchmarks.load.run import main

if __name__ == "__main__":
    main(sys.argv[1:])

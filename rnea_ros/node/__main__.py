"""``python -m rnea_ros.node``: rnea_node, with SIGINT and SIGTERM ending its start cleanly from the
first instant (its modules take 1-2 s to load: numpy, numba, rclpy); ``run`` is also the entry point."""

import os
import signal
import sys

from rnea_ros.node import start_phase


def _interrupt(_signum: int, _frame) -> None:
    raise KeyboardInterrupt


def run() -> None:
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _interrupt)  # as SIGINT does, until main() installs its own
    try:
        start_phase("python")
        if "coverage" not in sys.modules:  # not measured: numba's import would load coverage.py (0.1-0.2 s) for nothing
            sys.modules["coverage"] = None
        from rnea_ros.node.node import main
    except KeyboardInterrupt:  # as node.exit_interrupted does, before that module is there
        print("rnea_node: interrupted while starting", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(0)
    main()


if __name__ == "__main__":
    run()

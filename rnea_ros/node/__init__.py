"""rnea_node's ROS edge: ``node`` (``RneaNode`` and ``main``), ``messages``, ``outputs``,
``action_relay``. Its logic, tested without ROS, is ``rnea_ros.controller``'s.

``start_phase`` stamps the phases of the node's start on stderr when ``RNEA_START_TRACE`` is set
(``benchmarks/start_up.py`` reads them); otherwise it does nothing.
"""

import os
import sys
import time

START_TRACE = "RNEA_START_TRACE"


def start_phase(name: str) -> None:
    """``rnea_node start <name> <wall-clock s> <CPU s>`` on stderr when RNEA_START_TRACE is set (the CPU time
    is the process's, every thread's, since it started)."""
    if os.environ.get(START_TRACE):
        print(f"rnea_node start {name} {time.time():.6f} {time.process_time():.3f}", file=sys.stderr, flush=True)

"""One source tree's in-process answers, timed on request: the process that ``--against`` starts once
per tree (``PYTHONPATH`` = the tree), so that two trees of rnea_ros answer in one run, batch by batch.

    python benchmarks/answer_worker.py SETUP.json     # then lines on stdin: "<answer> <count>"

SETUP.json: ``description`` (URDF), ``settings`` (rnea_node parameters), ``trajectory`` and
``desired`` (paths of CDR bytes: a planner's trajectory; a stamped desired_accelerations message),
``states`` (joint_states to answer: names, positions, velocities, stamps), ``command_names``. Answers, one line of JSON
(the seconds of each) per request:

- ``trajectory``: rnea_node's answer to the planner's trajectory, bytes in → bytes out, on one thread;
- ``joint_states``: a JointState message read, its outputs computed (the desired point of its stamp,
  the gains) and effort_commands filled: what the node does before it publishes.

Imports the tree's own modules only (the node's logic moved from ``rnea_ros.node`` to
``rnea_ros.controller`` in issue 47: either is found).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numba
from sensor_msgs.msg import JointState
from std_msgs.msg import Header

try:
    from rnea_ros.controller.core import RneaCore, build_live_model
    from rnea_ros.controller.settings import settings_from
except ImportError:  # the tree before issue 47
    from rnea_ros.node.core import RneaCore, build_live_model
    from rnea_ros.node.settings import settings_from
from rnea_ros.motion.trajectory import MAX_TRAJECTORY_POINTS
from rnea_ros.node import messages

CLOCK = 1e12  # s: the node's clock (no stamp is in the future)


class Answers:
    def __init__(self, setup: dict) -> None:
        settings = settings_from(setup["settings"])
        self.core = RneaCore(settings)
        self.core.load(build_live_model(setup["description"], settings))
        self.trajectory = Path(setup["trajectory"]).read_bytes()
        desired = messages.desired_points(Path(setup["desired"]).read_bytes())
        self.core.live.set_desired(desired, time.monotonic())
        states = setup["states"]
        self.states = [
            JointState(name=states["names"], position=list(q), velocity=list(qd))
            for q, qd in zip(states["positions"], states["velocities"], strict=True)
        ]
        for msg, stamp in zip(self.states, states["stamps"], strict=True):
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(stamp * 1e9), 1_000_000_000)
        self.next_state = 0
        self.commands = messages.labelled_commands(setup["command_names"])
        numba.set_num_threads(1)  # the node's trajectory answer (trajectory_feedforward.ANSWER_THREADS)

    def answer_trajectory(self) -> None:
        content = messages.read_trajectory(self.trajectory, MAX_TRAJECTORY_POINTS, "joint_trajectory")
        messages.trajectory_cdr(Header(), self.core.trajectory(messages.trajectory_arrays(content)))

    def answer_joint_states(self) -> None:
        msg = self.states[self.next_state]  # IndexError past the last: a stamp never goes back
        self.next_state += 1
        outputs = self.core.joint_states(*messages.read_joint_states(msg), lambda: CLOCK)
        self.commands.data = messages.as_float64_array(outputs.commands)

    def timed(self, answer: str, count: int) -> list[float]:
        run = getattr(self, f"answer_{answer}")
        seconds = []
        for _ in range(count):
            start = time.perf_counter()
            run()
            seconds.append(time.perf_counter() - start)
        return seconds


def main() -> None:
    answers = Answers(json.loads(Path(sys.argv[1]).read_text()))
    print("ready", flush=True)
    for line in sys.stdin:
        answer, count = line.split()
        print(json.dumps(answers.timed(answer, int(count))), flush=True)


if __name__ == "__main__":
    main()

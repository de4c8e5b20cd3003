"""A ROS_DOMAIN_ID for one test or benchmark process that no concurrent process on this machine holds.

ROS 2 documents 0–101 as the ids safe on every platform (higher ids can collide with ephemeral
ports on Linux); 0 is the default a real robot uses, so the tests take 1–101. Each id is held by an
exclusive lock on a file in one folder of the machine (LOCK_DIRECTORY: not the temporary directory,
which TMPDIR changes per suite while DDS domains are the machine's), released by the system when the
process ends (even when it is killed), so that two suites running at once never share a domain.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

TEST_DOMAIN_IDS = range(1, 102)
LOCK_DIRECTORY = Path("/tmp/rnea_ros_domains")  # the same for every suite, whatever its TMPDIR
_held: list[IO] = []  # the lock files of this process: open as long as it runs


def reserve_domain_id(candidates: range = TEST_DOMAIN_IDS, directory: Path | None = None) -> int:
    """The first free id of ``candidates``, starting from one picked by the process id
    (RuntimeError when all are held)."""
    directory = directory or LOCK_DIRECTORY
    directory.mkdir(mode=0o777, parents=True, exist_ok=True)
    start = os.getpid() % len(candidates)
    for k in range(len(candidates)):
        domain = candidates[(start + k) % len(candidates)]
        lock = open(directory / f"rnea_ros_domain_{domain}.lock", "a")  # held open until the process exits
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        _held.append(lock)
        return domain
    raise RuntimeError(f"every ROS_DOMAIN_ID in {candidates} is held by another process")

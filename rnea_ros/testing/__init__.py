"""Helpers for the tests and the benchmarks, importable from both (never used at run time).

``reference`` (Pinocchio as the oracle; needs ``pin``), ``random_urdf`` (adversarial trees),
``recorded_data`` (simulated recordings), ``ros_harness`` (nodes in subprocesses over
loopback DDS), ``soak`` (a node under load with description swaps), ``closed_loop_runner``
(simulator, node and trajectory publisher on effort commands); the rest in docs/development.md.
"""

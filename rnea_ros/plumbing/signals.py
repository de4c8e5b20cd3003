"""rclpy's signal thread stopped before an executor goes: a SIGSEGV at Ctrl-C in Jazzy's rclpy.

rclpy's C handler for SIGINT and SIGTERM wakes a thread of its own, which walks the list of every
executor's SIGINT guard condition (``signal_handler.cpp``, ``trigger_guard_conditions``) with no
lock, while an executor shut down or collected meanwhile frees that list
(``unregister_sigint_guard_condition``). Under load the walk reads a freed block and rcl dies in
``rcl_trigger_guard_condition``: rnea_sim stopped by SIGINT died of SIGSEGV 2 times in 715 closed-loop
stops beside other processes, a plain rclpy process 1 time in ~1,950 (its core: the same frames,
the pointer glibc's tcache key). Uninstalling rclpy's handlers joins that thread first."""

from __future__ import annotations

from rclpy.signals import uninstall_signal_handlers


def join_signal_thread() -> None:
    """Restores the handlers rclpy found at init and joins its signal thread (a walk of the guard
    conditions in progress ends first). Call it once spinning is over, before shutting an executor
    down, destroying nodes or ``rclpy.try_shutdown``; a second call does nothing."""
    uninstall_signal_handlers()

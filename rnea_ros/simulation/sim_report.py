"""What rnea_sim counts, said at the end (its summary line) and while it runs (``/diagnostics``)."""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

OK, WARN = DiagnosticStatus.OK, DiagnosticStatus.WARN  # bytes of one level each


def counts(sim) -> dict[str, int | float]:
    """The counts of a running or finished ``SimNode`` (its robot built)."""
    commands, lockstep = sim.commands, sim.lockstep
    values = {
        "simulated_time": round(sim.robot.time, 6),
        "steps": sim.steps,
        "commands_taken": commands.accepted,
        "commands_refused": commands.refused,
        "commands_refused_joint_order": commands.refused_joint_order,
        "zero_effort_steps": commands.zero_effort_steps,
        "lockstep_timeouts": lockstep.timeouts,
        "states_sent_again": lockstep.resent_states,
        "efforts_clipped": sim.clipped,
    }
    if sim.jtc is not None:
        values |= {"trajectories_taken": sim.jtc.controller.trajectories, "trajectories_refused": sim.jtc.refused}
    if sim.wall_controller is not None:
        values |= sim.wall_controller.counts()
    if hasattr(commands, "age_counts"):  # motor_pd
        values |= commands.age_counts()
    if sim.p.realtime and sim.pacing is not None:
        values |= sim.pacing.counts(sim.steps)
    return values


def summary(values: dict[str, int | float]) -> str:
    """The line rnea_sim logs when it ends."""
    text = (
        f"simulated {values['simulated_time']:.3f} s in {values['steps']} steps: {values['commands_taken']} commands "
        f"taken, {values['commands_refused']} refused ({values['commands_refused_joint_order']} for their joint "
        f"order), {values['zero_effort_steps']} steps at zero effort (stale "
        f"command), {values['lockstep_timeouts']} lockstep waits timed out ({values['states_sent_again']} states "
        f"sent again), {values['efforts_clipped']} efforts clipped"
    )
    if "trajectories_taken" in values:
        text += f"; {values['trajectories_taken']} trajectories taken, {values['trajectories_refused']} refused"
    if "command_age_p50_ms" in values:
        text += (
            f"; commands' age at arrival p50 {values['command_age_p50_ms']} ms, max {values['command_age_max_ms']} ms"
        )
    if "real_time_factor" in values:
        text += (
            f"; since the release {values['real_time_factor']:.3f}x real time, largest backlog "
            f"{values['largest_backlog_ms']:.1f} ms, {values['wall_clock_slipped_s']:.3f} s slipped"
        )
    if "controller_updates" in values:
        text += (
            f"; controller on the wall clock: {values['controller_updates']} updates, "
            f"{values['controller_overruns']} overruns ({values['controller_missed_cycles']} missed cycles), "
            f"longest loop {values['controller_longest_loop_ms']:.3f} ms"
        )
    return text


def diagnostics(values: dict[str, int | float], hardware_id: str, joint_order_problem: str = "") -> DiagnosticArray:
    """One status "rnea_sim": WARN while steps went at zero effort, the controller overran, or
    commands were refused for their joints (``joint_order_problem``: what the last one said)."""
    problems = []
    if values["commands_refused_joint_order"]:
        problems.append(f"{values['commands_refused_joint_order']} commands refused: {joint_order_problem}")
    if values["zero_effort_steps"]:
        problems.append(f"{values['zero_effort_steps']} steps at zero effort (no command for command_timeout)")
    if values.get("controller_overruns"):
        problems.append(f"{values['controller_overruns']} controller overruns")
    status = DiagnosticStatus(
        level=WARN if problems else OK,
        name="rnea_sim",
        hardware_id=hardware_id,
        message="; ".join(problems) or "simulating",
        values=[KeyValue(key=key, value=str(value)) for key, value in values.items()],
    )
    return DiagnosticArray(status=[status])

"""rnea_sim's parameters, specified once (plain Python, no rclpy): its declarations, ``SimSettings``,
``config/sim.yaml`` and the documentation's table are made from ``SIM_PARAMETERS``. All read-only:
a simulated robot is rebuilt, not retuned."""

from __future__ import annotations

import math

from rnea_ros.parameter_spec import ParameterSpec, settings_class

SIM_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec(
        "robot_description",
        "string",
        "",
        "URDF text; empty: the robot_description topic (transient local).",
        read_only=True,
    ),
    ParameterSpec(
        "rate",
        "double",
        1000.0,
        "Physics steps per second of simulated time [Hz].",
        read_only=True,
        range=(10.0, 10000.0),
    ),
    ParameterSpec("publish_every", "int", 1, "joint_states every this many steps.", read_only=True, range=(1, 1000)),
    ParameterSpec(
        "realtime",
        "bool",
        True,
        "Pace the physics to the wall clock; false: lockstep with the commands.",
        read_only=True,
    ),
    ParameterSpec(
        "realtime_catch_up",
        "double",
        1000000.0,
        "Real time: the backlog behind the wall clock (a starved process) the physics makes up by stepping "
        "faster than real time [s]; further behind, the clock slips and the physics goes on at real time from "
        "there (the summary's real-time factor and time slipped).",
        read_only=True,
        range=(0.0, 1000000.0),
    ),
    ParameterSpec(
        "thread_priority",
        "int",
        0,
        "0: the default scheduler; 1-99: every thread of the simulator on SCHED_FIFO at this priority, as a "
        "robot's drivers and ros2_control's loop run (at 50 there).",
        read_only=True,
        range=(0, 99),
        details="Real time beside busy processes: the physics and its states ahead of ordinary processes "
        "(the simulated robot is not starved of CPU as a real robot never is). Needs the rtprio limit "
        "(ulimit -r, /etc/security/limits.conf) or root; when refused, a WARN says how and the simulator runs "
        "on the default scheduler.",
    ),
    ParameterSpec(
        "lockstep_timeout",
        "double",
        0.05,
        "Lockstep: longest wait for a command per step [s of wall time].",
        read_only=True,
        range=(1e-06, 1000000.0),
    ),
    ParameterSpec(
        "commands_topic",
        "string",
        "effort_controller/commands",
        "std_msgs/Float64MultiArray efforts, in `joints` order.",
        read_only=True,
    ),
    ParameterSpec(
        "joints",
        "string_array",
        (),
        "Joints the commands drive, in order; empty: every joint of the URDF that is no mimic, in rnea_node's "
        "order (depth first from the root link; rnea_gains writes the list). A command labelled with other joints "
        "or another order is refused.",
        read_only=True,
    ),
    ParameterSpec(
        "command_timeout",
        "double",
        0.1,
        "No command for this long (simulated time) gives zero effort, as a driver's watchdog does [s]; 0: the last "
        "command holds forever, as in a JointGroupEffortController (it has no timeout).",
        read_only=True,
        range=(0.0, 1000000.0),
    ),
    ParameterSpec(
        "release_after_commands",
        "int",
        1,
        "The brakes hold the robot until this many commands have arrived (time for the controller's "
        "other inputs, such as a force/torque sensor, to reach it).",
        read_only=True,
        range=(1, 100000),
    ),
    ParameterSpec(
        "initial_positions",
        "double_array",
        (0.0,),
        "Start positions in `joints` order (one value: all); the robot starts at rest.",
        read_only=True,
    ),
    ParameterSpec(
        "keep_urdf_damping",
        "bool",
        True,
        "Keep the URDF's <dynamics damping friction> (a real joint has them).",
        read_only=True,
    ),
    ParameterSpec(
        "armature",
        "double_array",
        (0.0,),
        "Extra reflected rotor inertia per joint of `joints` (one value: all) [kg·m²].",
        read_only=True,
    ),
    ParameterSpec(
        "damping",
        "double_array",
        (0.0,),
        "Extra viscous friction per joint of `joints` (one value: all) [N·m·s/rad].",
        read_only=True,
    ),
    ParameterSpec(
        "friction_loss",
        "double_array",
        (0.0,),
        "Extra dry friction per joint of `joints` (one value: all) [N·m].",
        read_only=True,
    ),
    ParameterSpec(
        "soft_friction",
        "bool",
        False,
        "Joint friction loss as MuJoCo's default soft constraint (its force settles within ~10 ms, as a "
        "real joint's takes time to); false: dry friction at its bound the moment the joint slides.",
        read_only=True,
    ),
    ParameterSpec("payload_link", "string", "", "Link that carries a payload; empty: none.", read_only=True),
    ParameterSpec("payload_mass", "double", 0.0, "Payload mass [kg].", read_only=True, range=(0.0, 10000.0)),
    ParameterSpec(
        "payload_com", "double_array", (0.0, 0.0, 0.0), "Payload centre of mass in the link frame [m].", read_only=True
    ),
    ParameterSpec(
        "payload_inertia",
        "double_array",
        (0.0, 0.0, 0.0),
        "Payload principal inertia about its centre of mass [kg·m²].",
        read_only=True,
    ),
    ParameterSpec(
        "sensor_topic",
        "string",
        "",
        "Publish a force/torque sensor between payload_link and the payload here; empty: none.",
        read_only=True,
    ),
    ParameterSpec(
        "sensor_reports_robot_side",
        "bool",
        False,
        "false: the wrench the payload applies on the robot (rnea_node's convention); true: the "
        "opposite, as sensors that report what the robot applies (list the topic in rnea_node's "
        "flip_wrench_topics).",
        read_only=True,
    ),
    ParameterSpec("gravity", "double_array", (0.0, 0.0, -9.81), "Gravity in the world frame [m/s²].", read_only=True),
    ParameterSpec(
        "floating_base",
        "bool",
        False,
        "Legged robots: a free root link on a ground plane through the world origin, contact shapes "
        "at contact_links, and nav_msgs/Odometry of the root link on odometry_topic.",
        read_only=True,
    ),
    ParameterSpec(
        "contact_links",
        "string_array",
        (),
        "Floating base: links that get a contact shape (URDF meshes are not loaded).",
        read_only=True,
    ),
    ParameterSpec(
        "contact_radius", "double", 0.02, "Radius of the contact spheres [m].", read_only=True, range=(0.0001, 1.0)
    ),
    ParameterSpec(
        "sole_size",
        "double_array",
        (0.0, 0.0),
        "Floating base: [length, width] of a flat sole (a box) centred on each contact link's "
        "origin in its x-y plane, instead of a sphere [m]; zeros: spheres.",
        read_only=True,
    ),
    ParameterSpec(
        "ground_slope",
        "double",
        0.0,
        "Floating base: the ground rises by this angle along world x [rad]; the robot starts aligned with it.",
        read_only=True,
        range=(-1.2, 1.2),
    ),
    ParameterSpec(
        "initial_yaw",
        "double",
        0.0,
        "Floating base: the robot starts turned by this angle about the ground's normal [rad] (0: facing "
        "world x, up the slope).",
        read_only=True,
        range=(-math.pi, math.pi),
    ),
    ParameterSpec(
        "friction",
        "double",
        1.0,
        "Friction coefficient of the contacts with the ground.",
        read_only=True,
        range=(0.0, 10.0),
    ),
    ParameterSpec(
        "odometry_topic",
        "string",
        "base_odometry",
        "Floating base: the root link's pose in the world and twist in its own frame.",
        read_only=True,
    ),
    ParameterSpec(
        "duration",
        "double",
        0.0,
        "Stop after this much simulated time once the brakes are released [s]; 0: run until shut down.",
        read_only=True,
    ),
    ParameterSpec(
        "record_file",
        "string",
        "",
        "Write every published state (the ground truth) to this .npz file at the end; empty: none.",
        read_only=True,
    ),
)
SIM_PARAMETERS += (
    ParameterSpec(
        "controller",
        "string",
        "forward_effort",
        "forward_effort: efforts on commands_topic, as a JointGroupEffortController; joint_trajectory: a "
        "joint_trajectory_controller stand-in inside the step loop (effort = the trajectory's effort + PID), "
        "trajectories on trajectory_topic; motor_pd: a driver that closes each joint's PD at every step, as legged "
        "robots' motor drivers do, on sensor_msgs/JointState commands on commands_topic (rnea_node's joint_commands: "
        "position, velocity, effort by name; effort = effort + pid_p (position - q) + pid_d (velocity - q̇)).",
        read_only=True,
        choices=("forward_effort", "joint_trajectory", "motor_pd"),
    ),
    ParameterSpec(
        "trajectory_topic",
        "string",
        "joint_trajectory_controller/joint_trajectory",
        "controller joint_trajectory: where its trajectories come (rnea_node's feedforward_trajectory).",
        read_only=True,
    ),
    ParameterSpec(
        "pid_p",
        "double_array",
        (0.0,),
        "joint_trajectory and motor_pd: PID p per joint of `joints` (one: all).",
        read_only=True,
    ),
    ParameterSpec("pid_i", "double_array", (0.0,), "joint_trajectory: PID i per joint (one: all).", read_only=True),
    ParameterSpec(
        "pid_d", "double_array", (0.0,), "joint_trajectory and motor_pd: PID d per joint (one: all).", read_only=True
    ),
    ParameterSpec(
        "pid_i_clamp", "double_array", (0.0,), "joint_trajectory: bound of the integral term per joint.", read_only=True
    ),
    ParameterSpec(
        "lockstep_answer_topic",
        "string",
        "",
        "Lockstep: a sensor_msgs/JointState topic on which the controller echoes the stamp of each state it "
        "answered (rnea_node's feedforward_efforts). With it lockstep is strict: each step waits for the answer "
        "to the state just published and the command sent before it, at most `lockstep_timeout`; a missing answer "
        "is an error line and a timeout counted, and lockstep is suspended until the controller answers again "
        "(at once when its writer is gone); empty: each step waits for any command sent after the state.",
        read_only=True,
    ),
    ParameterSpec(
        "tap_topic",
        "string",
        "",
        "Publish every joint_states also here, for a recorder (its own writer, so that the controller's "
        "reader of joint_states is the only one; transient local, the last 10 s kept for a late reader); "
        "empty: none.",
        read_only=True,
    ),
)
# the joint_trajectory_controller's action and state, as its jazzy parameters name them (``constraints.*``)
SIM_PARAMETERS += (
    ParameterSpec(
        "action_name",
        "string",
        "joint_trajectory_controller/follow_joint_trajectory",
        "controller joint_trajectory: its control_msgs/FollowJointTrajectory action server; empty: none.",
        read_only=True,
    ),
    ParameterSpec(
        "state_topic",
        "string",
        "joint_trajectory_controller/controller_state",
        "controller joint_trajectory: control_msgs/JointTrajectoryControllerState (reference, feedback, error, "
        "output = the effort commanded); empty: none.",
        read_only=True,
    ),
    ParameterSpec(
        "state_publish_rate",
        "double",
        100.0,
        "controller_state messages per second [Hz] (the JTC publishes one per update).",
        read_only=True,
        range=(1.0, 10000.0),
    ),
    ParameterSpec(
        "action_monitor_rate",
        "double",
        20.0,
        "Feedback and results of the action per second [Hz], as the JTC's action_monitor_rate.",
        read_only=True,
        range=(0.1, 1000.0),
    ),
    ParameterSpec(
        "constraints_goal_time",
        "double",
        0.0,
        "The JTC's constraints.goal_time: default time after the last point to reach the goal tolerance [s]; "
        "0: wait forever.",
        read_only=True,
        range=(0.0, 1000000.0),
    ),
    ParameterSpec(
        "constraints_stopped_velocity_tolerance",
        "double",
        0.01,
        "The JTC's constraints.stopped_velocity_tolerance: default goal velocity tolerance [rad/s] (0: none).",
        read_only=True,
        range=(0.0, 1000000.0),
    ),
    ParameterSpec(
        "constraints_trajectory",
        "double_array",
        (0.0,),
        "The JTC's constraints.<joint>.trajectory per joint of `joints` (one: all): default path position "
        "tolerance [rad] (0: none).",
        read_only=True,
    ),
    ParameterSpec(
        "constraints_goal",
        "double_array",
        (0.0,),
        "The JTC's constraints.<joint>.goal per joint (one: all): default goal position tolerance [rad] (0: none).",
        read_only=True,
    ),
    ParameterSpec(
        "allow_nonzero_velocity_at_trajectory_end",
        "bool",
        False,
        "As the JTC's: false refuses an action goal whose last point has a velocity (topic trajectories are "
        "taken either way).",
        read_only=True,
    ),
)
# the clock others read, and the controller's own clock
SIM_PARAMETERS += (
    ParameterSpec(
        "publish_clock",
        "bool",
        False,
        "Publish rosgraph_msgs/Clock on /clock with every joint_states: the stamp of that state (the start's "
        "wall-clock time plus the simulated time), in real time and in lockstep, for nodes with use_sim_time true.",
        read_only=True,
    ),
    ParameterSpec(
        "controller_clock",
        "string",
        "step",
        "controller joint_trajectory: step: the stand-in runs inside each physics step (the physics waits for "
        "it: a starved controller cannot show); wall: on its own thread at `rate` on the wall clock, as "
        "ros2_control_node's loop (the physics goes on; a late controller step leaves its last command in force, "
        "overruns counted as the controller manager counts them).",
        read_only=True,
        choices=("step", "wall"),
    ),
    ParameterSpec(
        "controller_delay",
        "double",
        0.0,
        "For tests: wall time added to every controller step with controller_clock wall (a starved controller) [s].",
        read_only=True,
        range=(0.0, 1.0),
    ),
    ParameterSpec(
        "diagnostics_period",
        "double",
        1.0,
        "diagnostic_msgs/DiagnosticArray on /diagnostics this often (wall clock): steps, steps at zero effort, "
        "commands, lockstep timeouts, clipped efforts, controller overruns [s].",
        read_only=True,
        range=(0.01, 3600.0),
    ),
)
SimSettings = settings_class("SimSettings", SIM_PARAMETERS)


def per_joint(values, n: int, name: str) -> list[float]:
    """A parameter given once for every joint or once per joint, as ``n`` values (ValueError otherwise)."""
    values = [float(v) for v in values]
    if len(values) == 1:
        return values * n
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} values: give 1 or {n}")
    return values

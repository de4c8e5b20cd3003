"""Solo12 trots in rnea_sim (lockstep) on joint PD plus rnea_node's feed-forward, the node's schedule
from its gait parameters (issue 48, item 4): diagonal pairs, period 0.5 s, duty 0.6, swing feet lifted
5 cm, in place for 3 s, then forward, reaching 0.1 m/s at 5 s, for 10 s. The same trot with every
foot as a static contact (no gait parameters) is the control. The simulator's record is the ground
truth (feet, ground wrenches, base pose); the node's contact_states say what force it gave each foot.
Lockstep: the figures do not depend on the machine's load; from run to run they vary a little (the
1 ms grid's phase against the trajectory's time 0)."""

from __future__ import annotations

import numpy as np
import pytest
import rclpy

from rnea_ros import RobotModel
from rnea_ros.testing.legged import SOLO_FEET, SOLO_FOOT_RADIUS, SOLO_URDF, solo_trot
from rnea_ros.testing.ros_harness import ROS_ENV, init_rclpy
from rnea_ros.testing.trot import SPANS, Legged, run_trot

# each run is 10 s of simulated trot with the node in lockstep: 2-4 min of wall time
pytestmark = [pytest.mark.ros, pytest.mark.slow]
SECONDS = 10.0


@pytest.fixture(scope="module", autouse=True)
def ros():
    init_rclpy()
    yield
    rclpy.try_shutdown()


def test_solo12_trots_ten_seconds_on_the_nodes_gait_and_better_than_with_static_contacts(tmp_path):
    """Issue 48's targets (measured: docs/figures/trot.md), scored in place (0.5-3 s) and walking at
    0.1 m/s (5-10 s): stance feet slide ≤ 3 mm per stance (their rolling on the spherical feet not
    counted), swing feet get ≤ 1 N from the node (contact_states) and none from the ground in mid-swing,
    swing feet within 5 mm RMS of their curve (base frame). In place, the base within 1 cm and 2° of
    its reference and the applied torques' largest step within 60 ms of a lift-off or touch-down under
    a fifth of what a switch without ramps would step (a leg's torque change between mid-stance and
    mid-swing, measured in the same run). Walking, nothing closes the loop on the base: it drifts
    (0.112 m/s for 0.1: 5.7-6.2 cm in 5 s) and the hind feet land early (impacts: steps up to half an
    unramped switch's); asserted as measured with a margin, and better than the control. The control
    (every foot a static contact) crouches and spreads its legs, its swing feet pushed down."""
    model = RobotModel.from_urdf(SOLO_URDF, floating_base=True)
    robot = Legged(SOLO_URDF, SOLO_FEET, SOLO_FOOT_RADIUS)
    trot = solo_trot(model, speed=0.1, walk_from=3.0, ramp=2.0)
    gait = run_trot(tmp_path, "trot_gait", robot, trot, SECONDS, True, ROS_ENV, SPANS)
    control = run_trot(tmp_path, "trot_static", robot, trot, SECONDS, False, ROS_ENV, SPANS)
    for scores in (gait, control):
        for score in scores.values():
            print(score.line())
    for span, score in gait.items():
        assert len(score.slip) >= 4 * round(2 * score.seconds) - 8, span  # every whole stance of the span
        assert score.contact_states > 1000 * score.seconds - 100, span  # the node's forces were seen
        assert score.slip.max() <= 3e-3, span
        assert score.swing_force_node <= 1.0, span
        assert score.swing_force_ground <= 1.0, span
        # walking: 4.58-4.81 mm in five runs (the target, 5 mm, met in each); the 1 ms grid's phase
        # against the trajectory's time 0 varies from run to run: the margin is for that
        assert score.swing_rms <= (5e-3 if span == "in place" else 5.5e-3), span
    still, walking = gait["in place"], gait["walking"]
    assert still.base_position_error <= 0.01
    assert still.base_orientation_error <= np.radians(2.0)
    assert still.step_at_events <= 0.2 * still.load_change
    assert walking.base_position_error <= 0.1 and walking.base_orientation_error <= np.radians(4.0)
    assert walking.step_at_events <= 0.8 * walking.load_change
    # the control, in place: a swing foot carries its share, its leg pushes into the ground
    fixed = control["in place"]
    assert fixed.swing_force_node > 5.0
    assert fixed.swing_rms > 10 * still.swing_rms
    assert fixed.base_position_error > 10 * still.base_position_error
    assert fixed.base_orientation_error > 10 * still.base_orientation_error
    assert control["walking"].base_position_error > 2 * walking.base_position_error

"""rnea_analyze on a recording made up for the purpose: the example arm with link4 20 % heavier
than its URDF says and viscous friction (2 N·m·s/rad) on joint3, 20 s at 1 kHz, noisy efforts.

    python examples/analyze_simulated.py [OUT_DIR]     # writes OUT_DIR/recording, OUT_DIR/analysis

The summary should show scales above 1 on the joints that carry link4 and joint3's viscous
coefficient; docs/analyze_example.png in the README is OUT_DIR/analysis/torques.png.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from rnea_ros.analysis.cli import main as analyze
from rnea_ros.demo.example_robot import example_arm_urdf
from rnea_ros.testing.recorded_data import heavier_link_urdf, simulate, write_bag


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "rnea_analyze_example")
    shutil.rmtree(out / "recording", ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    recording = simulate(heavier_link_urdf(1.2), 20.0, viscous={"joint3": 2.0}, seed=1)
    write_bag(out / "recording", recording, description=example_arm_urdf())
    return analyze([str(out / "recording"), "--out", str(out / "analysis")])


if __name__ == "__main__":
    sys.exit(main())

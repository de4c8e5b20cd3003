"""A second real robot, across recordings (issue 46, item 5): PAL's TIAGo recorded by the authors of
FIGAROH (``testing.tiago_recording``, read at run time from a git directory of thanhndv212/figaroh-plus,
never copied). Its efforts are motor currents, converted by an --effort-conversion file; its wrist
(arm 5-7) reports 0 in 88-90 % of the samples: not measured. rnea_analyze --identify runs on the
recording's first 40 s and --validate on the rest, a separate CSV file as a second recording."""

from __future__ import annotations

import pytest
import yaml

from rnea_ros.testing import tiago_recording as tiago
from rnea_ros.testing.panda_recording import rnea_analyze

pytestmark = pytest.mark.skipif(tiago.available() is not None, reason=str(tiago.available()))
SPLIT = 40.0  # s: the recording's motion runs from ~9 s to ~68 s


def validation_rows(output: str) -> dict[str, dict[str, float]]:
    """The --validate table: model → joint → residual RMS."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("validation on "))
    names = lines[start + 1].split()[1:-2]  # "model", the joints, "over joints"
    rows = {}
    for line in lines[start + 2 : start + 4]:
        label, values = (
            ("files written", line[16:].split()) if line.startswith("files") else ("URDF", line[16:].split())
        )
        rows[label] = dict(zip([*names, "over joints"], map(float, values), strict=True))
    return rows


@pytest.mark.slow  # rnea_analyze over TIAGo's 48-joint model twice (8,000 samples): ~20 s of CPU
def test_tiago_identified_on_one_part_is_validated_on_another_and_its_wrist_is_not_fitted(tmp_path):
    recording = tiago.read_recording()
    urdf = tiago.TIAGO_URDF.read_text()
    (tmp_path / "tiago.urdf").write_text(urdf)
    conversion = tiago.write_conversion(tmp_path / "conversion.yaml", urdf)
    first = recording.part(0.0, SPLIT).write_csv(tmp_path / "first.csv")
    rest = recording.part(SPLIT, 1e9).write_csv(tmp_path / "rest.csv")
    run = rnea_analyze(
        first, "--urdf", tmp_path / "tiago.urdf", "--effort-conversion", conversion, "--identify",
        "--validate", rest, "--out", tmp_path / "out", "--no-csv",
    )  # fmt: skip
    assert run.code == 0, run.output
    said = next(line for line in run.output.splitlines() if "taken as not measured" in line)
    assert all(name in said for name in tiago.UNMEASURED), run.output
    written = yaml.safe_load((tmp_path / "out" / "corrections.yaml").read_text())
    fitted = set(written.get("joints", {}))
    assert not fitted & set(tiago.UNMEASURED), written
    assert {"arm_1_joint", "arm_2_joint", "arm_3_joint", "arm_4_joint"} <= fitted, written
    rows = validation_rows(run.output)
    measured = ["torso_lift_joint", "arm_1_joint", "arm_2_joint", "arm_3_joint", "arm_4_joint"]
    assert list(rows["URDF"])[:-1] == measured, run.output  # the wrist's columns are not there
    assert "not measured there" in run.output and "arm_5_joint" in run.output.split("not measured there")[1]
    # the joint terms found on the first 40 s explain the other 40 s better than the URDF, every joint
    worse = {
        j: (rows["URDF"][j], rows["files written"][j]) for j in measured if rows["files written"][j] >= rows["URDF"][j]
    }
    assert not worse, run.output

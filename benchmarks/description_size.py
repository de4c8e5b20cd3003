"""Build time and peak memory of RobotModel.from_urdf against the description's size.

Each case is built in a fresh process (import and numba warm-up excluded from both figures):
flat stars of N links (the most links per byte), a description at the byte limit made of
what the dynamics do not read (cut before parsing the rest), the same limit filled by long
link names, mimic chains, and descriptions just over each limit (refused: the time to say so).
Usage: python benchmarks/description_size.py
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

CASE = textwrap.dedent(
    """
    import resource, sys, time
    from rnea_ros.dynamics.model import RobotModel
    from rnea_ros.dynamics.urdf import MAX_DESCRIPTION_BYTES, MAX_LINKS, ModelError
    from rnea_ros.testing.reference import ARM_URDF

    RobotModel.from_urdf(ARM_URDF).inverse_dynamics([0] * 8, [0] * 8, [0] * 8)  # imports and kernels
    kind, n = sys.argv[1], int(sys.argv[2])
    INERTIAL = ('<inertial><origin xyz="0 0 0.1"/><mass value="1"/>'
                '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')

    def link(name):
        return f'<link name="{name}">{INERTIAL}</link>'

    def joint(name, parent, child, mimic=""):
        return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="0.1 0 0" rpy="0 0 0.1"/><axis xyz="0 0 1"/>{mimic}</joint>')

    if kind == "star":
        parts = [link("l0")] + [link(f"l{i}") + joint(f"j{i}", "l0", f"l{i}") for i in range(1, n)]
    elif kind == "long names":
        pad = "x" * (((MAX_DESCRIPTION_BYTES - 10_000) // n - 450) // 3)
        parts = [link("l0")] + [link(f"l{i}{pad}") + joint(f"j{i}{pad}", "l0", f"l{i}{pad}") for i in range(1, n)]
    elif kind == "ignored elements":
        junk = '<visual><geometry><box size="1 1 1"/></geometry></visual>'
        parts = [link("l0").replace("</link>", junk * ((MAX_DESCRIPTION_BYTES - 1000) // len(junk)) + "</link>")]
    elif kind == "mimic chain":
        parts = [link("l0"), link("l1"), joint("j1", "l0", "l1")]
        for i in range(2, n):
            mimic = f'<mimic joint="j{i - 1}" multiplier="1.0001" offset="0"/>'
            parts += [link(f"l{i}"), joint(f"j{i}", f"l{i - 1}", f"l{i}", mimic)]
    else:  # over the link limit
        parts = [link(f"l{i}") for i in range(n)]
    xml = '<robot name="r">' + "".join(parts) + "</robot>"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        model = RobotModel.from_urdf(xml)
        outcome = f"{model.nv} dof"
    except ModelError as error:
        outcome = "refused: " + str(error)[:40]
    seconds = time.perf_counter() - start
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"{len(xml) / 2**20:.2f}|{seconds:.2f}|{peak:.0f}|{outcome}")
    """
)
CASES = [
    ("star", 100),
    ("star", 1_000),
    ("star", 3_000),
    ("star", 10_000),
    ("over the link limit", 10_001),
    ("long names", 10_000),
    ("ignored elements", 0),
    ("mimic chain", 4_000),
]


def main() -> None:
    print("| description | size [MiB] | build [s] | peak memory added [MiB] | outcome |")
    print("|---|---|---|---|---|")
    for kind, n in CASES:
        done = subprocess.run([sys.executable, "-c", CASE, kind, str(n)], capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            print(f"| {kind} {n} | failed: {done.stderr.strip()[-200:]} |")
            continue
        size, seconds, peak, outcome = done.stdout.strip().split("|")
        label = f"{kind}, {n:,} links" if n else kind
        print(f"| {label} | {size} | {seconds} | {peak} | {outcome} |", flush=True)


if __name__ == "__main__":
    main()

"""Writes the files made from the parameters' specifications: ``config/rnea.yaml``, ``config/sim.yaml``
and ``docs/reference/parameters.md`` (``python -m rnea_ros.generate_parameters``); a test fails when
they differ from what the specifications give.

It sits above the nodes' specifications (it imports them), so that ``parameter_spec`` imports none
of its users.
"""

from __future__ import annotations

from pathlib import Path

from rnea_ros.controller.parameters import NODE_PARAMETERS
from rnea_ros.parameter_spec import render_markdown, render_yaml
from rnea_ros.simulation.parameters import SIM_PARAMETERS


def generated_files() -> dict[str, str]:
    """Path (relative to the checkout) → text of every file made from the specifications."""
    reference = (
        "# Parameters\n\n"
        "Made by `python -m rnea_ros.generate_parameters` from the specifications in the package "
        "(`rnea_ros/controller/parameters.py`, `rnea_ros/simulation/parameters.py`); "
        "the same tables give the nodes' declarations and `config/*.yaml`.\n\n"
        + render_markdown("rnea_node", NODE_PARAMETERS)
        + "\n"
        + render_markdown("rnea_sim", SIM_PARAMETERS)
    )
    return {
        "config/rnea.yaml": render_yaml("rnea_node", NODE_PARAMETERS),
        "config/sim.yaml": render_yaml("rnea_sim", SIM_PARAMETERS),
        "docs/reference/parameters.md": reference,
    }


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    for relative, text in generated_files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {relative}")


if __name__ == "__main__":
    main()

"""The table of the node's inputs (rnea_ros/node/inputs.py) and docs/node.md say the same."""

from __future__ import annotations

import re
from pathlib import Path

from rnea_ros.node import inputs
from rnea_ros.node.state import LiveModel

NODE_MD = Path(__file__).resolve().parents[2] / "docs" / "node.md"


def documented_inputs(text: str) -> set[tuple[str, str]]:
    """(topic cell, message type) of every row of the tables of subscribed topics."""
    rows = set()
    for table in re.findall(r"\| topic \| type \| meaning \|\n\|[-|]+\|\n((?:\|.*\n)+)", text):
        for line in table.splitlines():
            topic, type_cell = (cell.strip() for cell in line.split("|")[1:3])
            rows.add((topic, re.match(r"`([\w/]+)`", type_cell).group(1)))
    return rows


def test_the_docs_list_every_input_of_the_table_and_no_other():
    text = NODE_MD.read_text()
    assert inputs.docs_table() in text, "run `python -m rnea_ros.node.inputs` and paste its table in docs/node.md"
    expected = {(inputs.topic_label(row), row.type_name) for row in inputs.INPUTS}
    assert documented_inputs(text) == expected


def test_every_setter_is_a_live_model_method_and_every_handler_the_nodes():
    node_source = (Path(inputs.__file__).parent / "node.py").read_text()
    for row in inputs.INPUTS:
        if row.handler is None:
            assert callable(getattr(LiveModel, row.setter, None)), row.topic
        else:
            assert f"def {row.handler}(" in node_source, row.topic

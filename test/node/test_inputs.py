"""The table of the node's inputs (rnea_ros/controller/inputs.py) and docs/node.md say the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rnea_ros.controller import inputs
from rnea_ros.controller.state import LiveModel

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
    assert inputs.docs_table() in text, "run `python -m rnea_ros.controller.inputs` and paste its table in docs/node.md"
    expected = {(inputs.topic_label(row), row.type_name) for row in inputs.INPUTS}
    assert documented_inputs(text) == expected


def test_every_row_has_a_setter_or_a_handler_and_a_reader_of_its_type():
    """The wiring is typed: a setter is a LiveModel method, a handler the node's, each reader's class the row's."""
    node = pytest.importorskip("rnea_ros.node.node")  # ROS: the node's side
    from rnea_ros.node import messages

    for row in inputs.INPUTS:
        if row.setter is not None:
            assert getattr(LiveModel, row.setter.__name__) is row.setter, row.topic
            assert row.topic not in node.HANDLERS
        else:
            assert node.HANDLERS[row.topic].__qualname__.startswith("RneaNode."), row.topic
        message_type = messages.READERS[row.topic].message_type
        assert f"{message_type.__module__.split('.')[0]}/{message_type.__name__}" == row.type_name, row.topic
    assert set(messages.READERS) == set(inputs.BY_TOPIC)
    assert set(node.HANDLERS) <= set(inputs.BY_TOPIC)

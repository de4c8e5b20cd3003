"""Description builds: one at a time, the newest valid one wins, superseded ones are never built."""

from __future__ import annotations

import threading

from rnea_ros.node.loader import MAX_WAITING, ModelLoader


class Recorder:
    def __init__(self, gate: threading.Event | None = None) -> None:
        self.built: list[str] = []
        self.loaded: list[str] = []
        self.refused: list[str] = []
        self.running = 0
        self.most_running = 0
        self.gate = gate
        self.building = threading.Event()
        self.lock = threading.Lock()

    def build(self, description: str) -> str:
        with self.lock:
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            self.built.append(description)
        self.building.set()
        if self.gate is not None:
            assert self.gate.wait(5.0)
        with self.lock:
            self.running -= 1
        if description.startswith("bad"):
            raise ValueError(description)
        return description

    def loader(self) -> ModelLoader:
        return ModelLoader(self.build, self.loaded.append, lambda error: self.refused.append(str(error)))


def test_a_broken_description_never_cancels_a_valid_one_before_it():
    gate = threading.Event()
    recorder = Recorder(gate)
    loader = recorder.loader()
    loader.submit("A")
    assert recorder.building.wait(5.0)  # A is building, held at the gate
    loader.submit("B")
    loader.submit("bad C")
    gate.set()
    assert loader.wait_idle(5.0)
    assert recorder.loaded == ["A", "B"]  # C refused; B, valid and older than C, still wins
    assert recorder.refused == ["bad C"]


def test_superseded_descriptions_are_dropped_unbuilt_and_builds_never_overlap():
    gate = threading.Event()
    recorder = Recorder(gate)
    loader = recorder.loader()
    for k in range(30):
        loader.submit(f"D{k}")
    gate.set()
    assert loader.wait_idle(5.0)
    assert recorder.loaded[-1] == "D29"
    assert len(recorder.built) <= 2  # the first (already building) and the newest
    assert recorder.most_running == 1


def test_waiting_descriptions_are_bounded():
    gate = threading.Event()
    recorder = Recorder(gate)
    loader = recorder.loader()
    loader.submit("first")
    assert recorder.building.wait(5.0)
    for k in range(100):
        loader.submit(f"bad {k}")
    assert len(loader._waiting) <= MAX_WAITING
    gate.set()
    assert loader.wait_idle(5.0)
    assert recorder.loaded == ["first"]
    assert len(recorder.refused) == MAX_WAITING

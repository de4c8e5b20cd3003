"""Description builds: one at a time, the newest valid one wins, superseded ones are never built."""

from __future__ import annotations

import threading

from rnea_ros.controller.loader import MAX_WAITING, ModelLoader


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


def test_load_now_waits_for_the_build_under_way_and_wins_over_what_came_before():
    gate = threading.Event()
    recorder = Recorder(gate)
    loader = recorder.loader()
    loader.submit("A")
    assert recorder.building.wait(5.0)  # A is building
    loader.submit("B")  # waiting
    done = threading.Event()

    def parameter_change():
        loader.load_now(lambda: recorder.build("P"), supersede=True)
        done.set()

    threading.Thread(target=parameter_change).start()
    assert not done.wait(0.2)  # one build at a time: P waits for A
    gate.set()
    assert done.wait(5.0) and loader.wait_idle(5.0)
    # B, submitted before P, may be built while P waits its turn, but never loaded after it
    assert recorder.loaded[0] == "A" and recorder.loaded[-1] == "P"
    assert recorder.most_running == 1


def test_load_now_without_supersede_keeps_the_waiting_descriptions():
    gate = threading.Event()
    recorder = Recorder(gate)
    loader = recorder.loader()
    loader.submit("A")
    assert recorder.building.wait(5.0)
    loader.submit("B")
    gate.set()
    # as the node does for a new gravity: rebuild the newest model loaded when its turn comes
    loader.load_now(lambda: recorder.build(recorder.loaded[-1] + " rebuilt"), supersede=False)
    assert loader.wait_idle(5.0)
    assert recorder.loaded[-1] in ("B", "B rebuilt")  # B is built after the rebuild, or rebuilt by it


def test_load_now_that_fails_changes_nothing():
    recorder = Recorder()
    loader = recorder.loader()
    loader.submit("A")
    assert loader.wait_idle(5.0)
    try:
        loader.load_now(lambda: recorder.build("bad P"), supersede=True)
    except ValueError:
        pass
    else:
        raise AssertionError("a failed build must raise")
    assert recorder.loaded == ["A"]

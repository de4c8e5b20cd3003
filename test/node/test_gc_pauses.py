"""The collector's freeze after a model load, and the pauses reported in /diagnostics."""

from __future__ import annotations

import gc
import weakref

import pytest

from rnea_ros.node.gc_pauses import CollectionPauses, freeze_long_lived_objects, thaw


class Cycle:
    """An object only the cyclic collector can free (it refers to itself)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def thawed_afterwards():
    yield
    thaw()


def test_objects_alive_at_the_freeze_leave_the_collectors_reach():
    kept = Cycle()
    freeze_long_lived_objects()
    assert gc.get_freeze_count() > 0
    assert not any(obj is kept for obj in gc.get_objects())


def test_garbage_made_after_the_freeze_is_still_collected():
    freeze_long_lived_objects()
    garbage = Cycle()
    gone = weakref.ref(garbage)
    del garbage
    gc.collect()
    assert gone() is None


def test_only_the_first_load_freezes_so_later_models_stay_collectable():
    """A reload costs no full collection, and a flood of reloads cannot pile up frozen garbage."""
    freeze_long_lived_objects()
    frozen = gc.get_freeze_count()
    later_model = Cycle()
    gone = weakref.ref(later_model)
    freeze_long_lived_objects()  # the next load
    assert gc.get_freeze_count() == frozen
    del later_model
    gc.collect()
    assert gone() is None


def test_pauses_count_the_collectors_own_collections_and_not_the_freeze():
    pauses = CollectionPauses().install()
    try:
        freeze_long_lived_objects()
        assert pauses.counts == [0, 0, 0]
        gc.collect(0)
        gc.collect(2)
    finally:
        pauses.uninstall()
    assert pauses.counts[0] >= 1 and pauses.counts[2] >= 1
    assert pauses.longest[2] > 0.0
    counted = list(pauses.counts)
    gc.collect(0)  # uninstalled: no longer counted
    assert pauses.counts == counted
    values = pauses.values()
    assert values["garbage collections, generation 2"].startswith(f"{pauses.counts[2]} (longest ")

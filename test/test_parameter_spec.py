"""One specification per node: the settings, config/*.yaml and the parameter reference come from it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from rnea_ros.node.parameters import NODE_PARAMETERS
from rnea_ros.node.settings import Settings, settings_from
from rnea_ros.parameter_spec import ParameterSpec, generated_files, render_yaml, typed
from rnea_ros.simulation.parameters import SIM_PARAMETERS, SimSettings

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("relative", sorted(generated_files()))
def test_generated_files_are_what_the_specification_gives(relative):
    """config/*.yaml and docs/reference/parameters.md are never edited by hand."""
    assert (ROOT / relative).read_text(encoding="utf-8") == generated_files()[relative], (
        f"{relative} differs from the specification: run `python -m rnea_ros.parameter_spec`"
    )


@pytest.mark.parametrize(("specs", "settings"), [(NODE_PARAMETERS, Settings), (SIM_PARAMETERS, SimSettings)])
def test_settings_have_exactly_the_specified_fields_and_defaults(specs, settings):
    fields = {f.name: f.default for f in dataclasses.fields(settings)}
    assert list(fields) == [spec.name for spec in specs]  # same names, same order
    assert fields == {spec.name: spec.default for spec in specs}
    assert settings() == settings(**{spec.name: spec.default for spec in specs})


@pytest.mark.parametrize("specs", [NODE_PARAMETERS, SIM_PARAMETERS])
def test_config_files_parse_to_the_defaults(specs):
    """Every parameter is in the file with its default (empty arrays commented out: unset is empty)."""
    text = render_yaml("node", specs)
    values = yaml.safe_load(text)["/**"]["ros__parameters"]
    for spec in specs:
        if spec.type.endswith("_array") and not spec.default:
            assert spec.name not in values and f"# {spec.name}: []" in text
        else:
            assert typed(spec, values[spec.name]) == spec.default, spec.name


def test_array_parameters_read_as_tuples_without_empty_entries():
    assert settings_from({"command_joints": [""]}).command_joints == ()
    assert settings_from({"contact_links": None}).contact_links == ()  # an unset array
    assert settings_from({"kp": [1, 2]}).kp == (1.0, 2.0)


def test_values_outside_their_range_or_choices_are_refused():
    with pytest.raises(ValueError, match="state_timeout"):
        settings_from({"state_timeout": 0.0})
    with pytest.raises(ValueError, match="command_source"):
        settings_from({"command_source": "torque"})
    with pytest.raises(ValueError, match="integer"):
        typed(next(s for s in SIM_PARAMETERS if s.name == "publish_every"), 1.5)


def test_a_default_that_does_not_fit_its_type_is_a_bug_caught_at_import():
    with pytest.raises(ValueError):
        ParameterSpec("rate", "double", "fast", "x")
    with pytest.raises(ValueError):
        ParameterSpec("rate", "double", 0.0, "x", range=(1.0, 2.0))

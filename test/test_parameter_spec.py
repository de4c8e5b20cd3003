"""One specification per node: the settings, config/*.yaml and the parameter reference come from it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from rnea_ros.controller.parameters import NODE_PARAMETERS
from rnea_ros.controller.settings import Settings, settings_from
from rnea_ros.generate_parameters import generated_files
from rnea_ros.parameter_spec import ParameterSpec, render_yaml, typed
from rnea_ros.simulation.parameters import SIM_PARAMETERS, SimSettings

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("relative", sorted(generated_files()))
def test_generated_files_are_what_the_specification_gives(relative):
    """config/*.yaml and docs/reference/parameters.md are never edited by hand."""
    assert (ROOT / relative).read_text(encoding="utf-8") == generated_files()[relative], (
        f"{relative} differs from the specification: run `python -m rnea_ros.generate_parameters`"
    )


@pytest.mark.parametrize(("specs", "settings"), [(NODE_PARAMETERS, Settings), (SIM_PARAMETERS, SimSettings)])
def test_settings_have_exactly_the_specified_fields_and_defaults(specs, settings):
    per_joint = {"joint_gains"}  # gains.<joint>.p/.d: a map of parameters, no single one
    fields = {f.name: f.default for f in dataclasses.fields(settings) if f.name not in per_joint}
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


def test_the_specification_validates_as_generate_parameter_library_does():
    """Unique entries, lengths one-for-all or one-per-link, element bounds, size limits: the spec
    says them once and every Settings (from ROS or built in Python) is checked by it."""
    with pytest.raises(ValueError, match="more than once"):
        settings_from({"contact_links": ["a", "b", "a"]})
    with pytest.raises(ValueError, match="per entry of contact_links"):
        settings_from({"contact_links": ["a", "b"], "sole_size": [0.2, 0.1, 0.2]})
    assert settings_from({"contact_links": ["a", "b"], "sole_size": [0.2, 0.1, 0.3, 0.1]}).sole_size[2] == 0.3
    with pytest.raises(ValueError, match="kp must be finite and ≥ 0"):
        settings_from({"kp": [1.0, -1.0]})
    with pytest.raises(ValueError, match="gravity must have 3 values"):
        Settings(gravity=(0.0, -9.81))
    with pytest.raises(ValueError, match="at most 32"):
        Settings(wrench_topics=tuple(f"t{i}" for i in range(33)))


def test_rclpy_own_parameters_are_no_concern_of_the_settings():
    """A live set of use_sim_time (or qos_overrides.*) reaches the node's callback with the others."""
    settings = Settings(kp=(1.0,))
    assert settings_from({"use_sim_time": True, "start_type_description_service": False}, settings) == settings
    assert settings_from({"use_sim_time": True, "kd": [2.0]}, settings).kd == (2.0,)


def test_the_contact_qp_defaults_and_bounds_are_the_library_s():
    from rnea_ros.dynamics.contact_options import CONTACT_QP_BOUNDS, ContactQPOptions

    by_name = {spec.name: spec for spec in NODE_PARAMETERS}
    for option in dataclasses.fields(ContactQPOptions):
        assert by_name[option.name].default == option.default
        assert by_name[option.name].range == CONTACT_QP_BOUNDS[option.name]
    assert Settings().contact_qp(()).options == ContactQPOptions()


def test_the_generator_sits_above_the_specifications_it_reads():
    source = (ROOT / "rnea_ros/parameter_spec.py").read_text(encoding="utf-8")
    assert "rnea_ros.node" not in source and "rnea_ros.simulation" not in source


@pytest.mark.ros
def test_the_descriptors_carry_the_constraints_ros2_param_describe_shows():
    from rnea_ros.parameter_spec import constraint_text
    from rnea_ros.plumbing.ros_parameters import descriptor

    for spec in NODE_PARAMETERS + SIM_PARAMETERS:
        assert descriptor(spec).additional_constraints == constraint_text(spec), spec.name
    choices = next(spec for spec in NODE_PARAMETERS if spec.name == "command_source")
    assert "inverse_dynamics | gravity | none" in descriptor(choices).additional_constraints

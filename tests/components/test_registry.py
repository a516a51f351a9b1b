"""The registry: what every scenario's program exports fits the model its steps read, and
a new scenario is one new module — no dispatch code changes."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import components.contract.scenarios as package
from automation.core.errors import KubeshiftError
from automation.scenarios import ScenarioDrift, build_scenario
from components.contract import registry
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from components.contract.progress import PROGRESS_OUTPUT
from tests.components.conftest import rendered, stack_values

STACKS = ("vpc-move-small", "cni-swap-example", "overlay-switch-example")


def _phases(stack: str) -> list[tuple[str, str]]:
    return [(stack, phase) for phase in load_config(stack_values(stack)).phase_ids]


@pytest.mark.parametrize(
    ("stack", "phase"), [case for stack in STACKS for case in _phases(stack)], ids=str
)
def test_every_phase_exports_exactly_what_its_outputs_model_declares(
    stack: str, phase: str
) -> None:
    spec = registry.spec(load_config(stack_values(stack)).scenario)
    outputs = {k: v for k, v in rendered(stack, phase).outputs.items() if k != PROGRESS_OUTPUT}
    parsed = registry.parse_outputs(spec.outputs, outputs, stack)
    assert parsed.phase == phase and parsed.scenario == spec.id
    assert not parsed.model_extra, f"undeclared outputs: {sorted(parsed.model_extra or {})}"


def test_outputs_from_another_version_are_one_sentence() -> None:
    vpc_move = registry.spec("vpc-move")
    bad = {"records": {"api": {"name": "api.example.com", "type": "MX", "values": []}}}
    with pytest.raises(registry.OutputsError) as caught:
        registry.parse_outputs(vpc_move.outputs, bad, "prod")
    message = str(caught.value)
    assert "stack 'prod'" in message and "outputs.records.api.type" in message
    assert message.count(". ") == 0 and "\n" not in message


def test_an_empty_stack_reads_as_defaults() -> None:
    specs = registry.specs()
    assert {s.id for s in specs} == {load_config(stack_values(s)).scenario for s in STACKS}
    for spec in specs:
        parsed = registry.parse_outputs(spec.outputs, {}, "new")
        assert parsed.phase is None and parsed.node_security_group_ids == []


NEW_SCENARIO = '''
"""A scenario added by a test: one module, nothing else touched."""
from automation.model.phase import CREATES_AND_UPDATES, Phase, Scenario
from components.contract.registry import ScenarioSpec, StackOutputs

PHASES = ("baseline", "tag-everything")


class TagOutputs(StackOutputs):
    tagged: bool = False


def build(config):
    import pulumi_aws as aws

    aws.ec2.Vpc("vpc", cidr_block=str(config.cluster.network.cidr))
    return {{"scenario": config.scenario, "phase": config.phase,
             "tagged": config.phase == "tag-everything"{extra}}}


def steps(config):
    return Scenario(
        id="tag-move",
        summary="tag everything",
        phases=tuple(
            Phase(id=p, summary=p, changes=CREATES_AND_UPDATES) for p in {automation_phases}
        ),
    )


SPEC = ScenarioSpec(
    id="tag-move",
    summary="Tag everything (a test's scenario).",
    phases=lambda members: PHASES,
    outputs=TagOutputs,
    builder="components.contract.scenarios.tag_move:build",
    steps="components.contract.scenarios.tag_move:steps",
)
'''


@pytest.fixture
def add_scenario(tmp_path: Path) -> Iterator[Any]:
    """Put a scenario module where the registry looks; take it away afterwards."""

    def add(automation_phases: str = "PHASES", extra: str = "") -> None:
        text = NEW_SCENARIO.format(automation_phases=automation_phases, extra=extra)
        (tmp_path / "tag_move.py").write_text(textwrap.dedent(text))
        registry.specs.cache_clear()

    package.__path__.append(str(tmp_path))
    try:
        yield add
    finally:
        package.__path__.remove(str(tmp_path))
        sys.modules.pop("components.contract.scenarios.tag_move", None)
        registry.specs.cache_clear()


def test_a_new_scenario_module_is_validated_run_and_built(add_scenario: Any) -> None:
    values = {**stack_values("vpc-move-small"), "kubeshift:scenario": "tag-move"}
    with pytest.raises(ConfigError, match="is not a known scenario"):
        load_config({**values, "kubeshift:phase": "baseline"})
    add_scenario()
    config = load_config({**values, "kubeshift:phase": "tag-everything"})
    assert config.phase_ids == ("baseline", "tag-everything")
    assert build_scenario(config).ids() == config.phase_ids
    from automation.review.render import render_program

    rendering = render_program(values, "tag-everything")
    assert [r.type for r in rendering.resources if r.type.startswith("aws:")] == ["aws:ec2/vpc:Vpc"]
    assert rendering.outputs["tagged"] is True


def test_automation_that_drifts_from_its_spec_is_one_clear_error(add_scenario: Any) -> None:
    add_scenario(automation_phases='("baseline",)')
    values = {**stack_values("vpc-move-small"), "kubeshift:scenario": "tag-move"}
    config = load_config({**values, "kubeshift:phase": "baseline"})
    with pytest.raises(ScenarioDrift) as caught:
        build_scenario(config)
    assert isinstance(caught.value, KubeshiftError)
    assert "tag-everything" in str(caught.value)


def test_an_output_its_model_does_not_declare_stops_the_program(add_scenario: Any) -> None:
    add_scenario(extra=', "taged": True')
    values = {**stack_values("vpc-move-small"), "kubeshift:scenario": "tag-move"}
    from automation.review.render import render_program

    with pytest.raises(Exception, match="exports taged, which TagOutputs does not declare"):
        render_program(values, "baseline")

"""Targeted control-plane updates: the URNs come from the program's own renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.core.errors import PreconditionFailed
from automation.run.targets import PhaseRenders, target_urns
from automation.scenarios import build_scenario
from components.contract.loading import load_config, load_stack_file

STACK = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.local.yaml"
ROOT = "urn:pulumi:local::kubeshift::pulumi:pulumi:Stack::kubeshift-local"


@pytest.fixture(scope="module")
def renders() -> PhaseRenders:
    values = load_stack_file(STACK)
    return PhaseRenders(values, load_config(values).phase_ids)


def _names(urns: list[str]) -> set[str]:
    return {u.rsplit("::", 1)[-1] for u in urns}


def test_only_control_plane_phases_are_targeted() -> None:
    scenario = build_scenario(load_config(load_stack_file(STACK)))
    targeted = [p.id for p in scenario.phases if p.targeted]
    assert targeted == [p for p in scenario.ids() if p.startswith("control-plane-")]


def _old(member: int) -> list[str]:
    """Member ``member``'s source-side resources as the stack holds them."""
    chain = (
        "urn:pulumi:local::kubeshift::kubeshift:scenario:VpcMove$kubeshift:compute:ControlPlane$"
    )
    kinds = {
        "eni": "aws:ec2/networkInterface:NetworkInterface",
        "lt": "aws:ec2/launchTemplate:LaunchTemplate",
        "asg": "aws:autoscaling/group:Group",
    }
    return [f"{chain}{t}::local-demo-control-plane-{k}-{member}" for k, t in kinds.items()]


def test_a_member_move_targets_that_member_the_api_record_and_the_stack(
    renders: PhaseRenders,
) -> None:
    urns = target_urns(renders, "control-plane-2", [ROOT, *_old(2), *_old(3)])
    names = _names(urns)
    moved = {f"local-demo-control-plane-{kind}-2{side}" for kind in ("eni", "lt", "asg")
             for side in ("", "-mig")}  # fmt: skip
    assert moved <= names
    assert "local-demo-dns-api" in names and ROOT in urns
    members = {n for n in names if "control-plane" in n}
    assert members == moved  # members 1 and 3 stay out of member 2's move
    assert not any("etcd" in n for n in names)  # volumes stay out of every move
    # Real URNs carry every ancestor's type, which the SDK's mocks do not.
    asg = next(u for u in urns if u.endswith("::local-demo-control-plane-asg-2-mig"))
    assert asg == (
        "urn:pulumi:local::kubeshift::kubeshift:scenario:VpcMove$kubeshift:compute:"
        "ControlPlane$aws:autoscaling/group:Group::local-demo-control-plane-asg-2-mig"
    )


def test_the_first_move_also_creates_the_new_api_load_balancer(renders: PhaseRenders) -> None:
    names = _names(target_urns(renders, "control-plane-1", [ROOT, *_old(1)]))
    assert {"local-demo-api-mig-lb", "local-demo-api-mig-tg-443"} <= names


def test_what_an_update_by_hand_already_deleted_is_not_targeted(renders: PhaseRenders) -> None:
    """A hand-run `pulumi up` moved member 1 already: its old resources are gone from the
    stack, and the engine refuses a target that is neither in the state nor declared."""
    urns = target_urns(renders, "control-plane-1", [ROOT])
    assert not any(u in urns for u in _old(1))
    assert "local-demo-control-plane-asg-1-mig" in _names(urns)  # declared: kept


def test_a_stack_without_resources_cannot_be_targeted(renders: PhaseRenders) -> None:
    with pytest.raises(PreconditionFailed, match="has no resources yet"):
        target_urns(renders, "control-plane-1", [])


def test_a_later_run_reads_the_renders_an_earlier_one_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    values = load_stack_file(STACK)
    ids = load_config(values).phase_ids
    first = PhaseRenders(values, ids, tmp_path / "render-cache").entering("control-plane-1")

    from automation.review import render

    def refused(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("rendered again although the cache holds both phases")

    monkeypatch.setattr(render, "render_program", refused)
    again = PhaseRenders(values, ids, tmp_path / "render-cache").entering("control-plane-1")

    assert again == first
    assert first.added or first.changed or first.removed

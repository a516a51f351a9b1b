"""automation.review.checkpoint: a phase judged against a checkpoint, each rule able to fail.

The checkpoint here is what the engine would keep after deploying a phase: every
resource the program registers, under the URN the engine makes, its inputs and outputs
as the export writes them, its default provider and that provider's configuration.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pulumi
import pytest
from pulumi.runtime import rpc

from automation.review import render as rendering
from automation.review.checkpoint import (
    DEFAULTS,
    SECRET_SIG,
    SIG,
    STACK_TYPE,
    Verdict,
    _CheckpointMonitor,
    judge,
    tail,
)
from components.contract.loading import load_stack_file
from tests.components.conftest import STACKS

VPC = "aws:ec2/vpc:Vpc"
REGION = "eu-west-1"


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    return load_stack_file(STACKS / "Pulumi.vpc-move-small.yaml")


def _export(value: Any) -> Any:
    """The SDK's encoding as the export writes it (a secret shown, as --show-secrets)."""
    if isinstance(value, dict):
        if value.get(SIG) == SECRET_SIG:
            return {SIG: SECRET_SIG, "plaintext": json.dumps(_export(value["value"]))}
        return {k: _export(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_export(v) for v in value]
    return value


def deployed(config: dict[str, Any], phase: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The checkpoint after ``phase`` was deployed, and the stack's config."""
    monitors: list[_CheckpointMonitor] = []

    def monitor(mocks: pulumi.runtime.Mocks) -> rendering._RecordingMonitor:
        monitors.append(_CheckpointMonitor(mocks, {}))
        return monitors[-1]

    rendering.render_program(config, phase, monitor=monitor)
    records = monitors[-1].records
    stack = "urn:pulumi:s::kubeshift::pulumi:pulumi:Stack::kubeshift-s"
    resources: list[dict[str, Any]] = [{"urn": stack, "type": STACK_TYPE, "custom": False}]
    versions = {r.version for r, _, _ in records if r.custom}
    for version in sorted(versions):
        name = "default_" + version.replace(".", "_") if version else "default"
        resources.append(
            {
                "urn": f"urn:pulumi:s::kubeshift::pulumi:providers:aws::{name}",
                "type": "pulumi:providers:aws",
                "custom": True,
                "id": f"{name}-id",
                "inputs": {"__internal": {}, "region": REGION, "version": version},
            }
        )
    for request, response, inputs in records:
        state = rpc.deserialize_properties(response.object, keep_unknowns=True)
        name = "default_" + request.version.replace(".", "_") if request.version else "default"
        resources.append(
            {
                "urn": response.urn,
                "type": request.type,
                "custom": request.custom,
                "id": response.id,
                "parent": request.parent or stack,
                "inputs": _export(inputs),
                "outputs": _export(state),
                "dependencies": list(request.dependencies),
                "protect": request.protect,
                **(
                    {"provider": f"urn:pulumi:s::kubeshift::pulumi:providers:aws::{name}::x"}
                    if request.custom
                    else {}
                ),
            }
        )
    return {"resources": resources}, {"aws:region": REGION}


def resource(deployment: dict[str, Any], kind: str) -> dict[str, Any]:
    """The first of ``kind`` by URN (registrations arrive in no fixed order)."""
    return min((r for r in deployment["resources"] if r["type"] == kind), key=lambda r: r["urn"])


@pytest.fixture(scope="module")
def checkpoint(small: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    return deployed(small, "target-network")


def judged(
    small: dict[str, Any], checkpoint: tuple[dict[str, Any], dict[str, str]], edit: Any = None
) -> Verdict:
    deployment, config = copy.deepcopy(checkpoint)
    if edit is not None:
        edit(deployment, config)
    return judge(small, "target-network", deployment, config)


def test_the_phase_deployed_is_unchanged(small: dict, checkpoint: tuple) -> None:
    verdict = judged(small, checkpoint)
    assert verdict.unchanged, verdict.changes
    assert verdict.compared > 20
    assert verdict.root is not None and tail(verdict.root) == "<stack>"


def test_the_next_phase_with_new_resources_is_a_change(small: dict, checkpoint: tuple) -> None:
    verdict = judge(small, "shared-resources", *copy.deepcopy(checkpoint))
    assert not verdict.unchanged
    assert any(c.startswith("create ") for c in verdict.changes)


def test_the_earlier_phase_deletes(small: dict, checkpoint: tuple) -> None:
    verdict = judge(small, "baseline", *copy.deepcopy(checkpoint))
    assert any(c.startswith("delete ") for c in verdict.changes)


def test_a_stack_never_updated_is_never_unchanged(small: dict) -> None:
    verdict = judge(small, "target-network", {"resources": []}, {})
    assert not verdict.unchanged and verdict.root is None


def test_an_input_the_checkpoint_holds_otherwise(small: dict, checkpoint: tuple) -> None:
    def edit(deployment: dict, _config: dict) -> None:
        vpc = resource(deployment, VPC)
        vpc["inputs"]["cidrBlock"] = vpc["outputs"]["cidrBlock"] = "10.99.0.0/16"

    verdict = judged(small, checkpoint, edit)
    assert [c for c in verdict.changes if "cidrBlock" in c], verdict.changes
    assert verdict.summary().startswith(f"{len(verdict.changes)} differ from the checkpoint")


def test_what_the_provider_defaulted_is_not_the_programs(small: dict, checkpoint: tuple) -> None:
    def edit(deployment: dict, _config: dict) -> None:
        vpc = resource(deployment, VPC)
        vpc["inputs"].update({"instanceTenancy": "default", DEFAULTS: ["instanceTenancy"]})

    assert judged(small, checkpoint, edit).unchanged


def test_an_input_the_provider_did_not_default_counts(small: dict, checkpoint: tuple) -> None:
    def edit(deployment: dict, _config: dict) -> None:
        resource(deployment, VPC)["inputs"].update({"instanceTenancy": "default", DEFAULTS: []})

    assert not judged(small, checkpoint, edit).unchanged


TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"


@pytest.mark.parametrize(("named", "unchanged"), [(["timeout"], True), ([], False)])
def test_a_nested_default_counts_only_where_the_provider_named_it(
    small: dict, checkpoint: tuple, named: list[str], unchanged: bool
) -> None:
    """The bridge keeps a defaults list in each nested object; a nested attribute it
    did not list there is the program's, and the program no longer declares it."""

    def edit(deployment: dict, _config: dict) -> None:
        group = resource(deployment, TARGET_GROUP)
        group["inputs"]["healthCheck"].update({"timeout": 10, DEFAULTS: named})
        group["outputs"]["healthCheck"]["timeout"] = 10

    verdict = judged(small, checkpoint, edit)
    assert verdict.unchanged is unchanged, verdict.changes


GROUP = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"


def test_a_set_in_another_order_is_the_same_set(small: dict, checkpoint: tuple) -> None:
    """A Terraform set (a group's tags) has no order: the bridge writes it in its own."""

    def edit(deployment: dict, _config: dict) -> None:
        group = resource(deployment, GROUP)
        group["inputs"]["tags"].reverse()
        group["outputs"]["tags"].reverse()

    assert judged(small, checkpoint, edit).unchanged


def test_a_set_with_another_member_differs(small: dict, checkpoint: tuple) -> None:
    def edit(deployment: dict, _config: dict) -> None:
        group = resource(deployment, GROUP)
        group["outputs"]["tags"].reverse()
        group["outputs"]["tags"][0] = {**group["outputs"]["tags"][0], "value": "drifted"}

    verdict = judged(small, checkpoint, edit)
    assert any(c.endswith(": inputs tags") for c in verdict.changes), verdict.changes


def test_a_list_in_another_order_differs(small: dict, checkpoint: tuple) -> None:
    """A Terraform list keeps its order, and the provider's diff sees a new one."""

    def edit(deployment: dict, _config: dict) -> None:
        template = min(
            (r for r in deployment["resources"] if r["type"] == TEMPLATE
             and len(r["outputs"].get("tagSpecifications") or ()) > 1),
            key=lambda r: r["urn"],
        )  # fmt: skip
        template["outputs"]["tagSpecifications"].reverse()

    verdict = judged(small, checkpoint, edit)
    assert any(c.endswith(": inputs tagSpecifications") for c in verdict.changes), verdict.changes


def test_outputs_a_refresh_changed_count(small: dict, checkpoint: tuple) -> None:
    def edit(deployment: dict, _config: dict) -> None:
        resource(deployment, VPC)["outputs"]["cidrBlock"] = "10.99.0.0/16"

    assert any("inputs cidrBlock" in c for c in judged(small, checkpoint, edit).changes)


def test_a_resource_the_program_no_longer_declares(small: dict, checkpoint: tuple) -> None:
    def edit(deployment: dict, _config: dict) -> None:
        extra = copy.deepcopy(resource(deployment, VPC))
        extra["urn"] = extra["urn"].rsplit("::", 1)[0] + "::left-over"
        deployment["resources"].append(extra)

    assert any(c.endswith("::left-over") for c in judged(small, checkpoint, edit).changes)


def test_provider_configuration_and_version(small: dict, checkpoint: tuple) -> None:
    def region(_deployment: dict, config: dict) -> None:
        config["aws:region"] = "us-east-2"

    def version(deployment: dict, _config: dict) -> None:
        for item in deployment["resources"]:
            if "provider" in item:
                item["provider"] = item["provider"].replace("::default_", "::default_0_")

    assert any("provider's configuration" in c for c in judged(small, checkpoint, region).changes)
    assert any("the program's default is" in c for c in judged(small, checkpoint, version).changes)


def test_protection_parent_and_dependencies(small: dict, checkpoint: tuple) -> None:
    def protect(deployment: dict, _config: dict) -> None:
        resource(deployment, VPC)["protect"] = True

    def depends(deployment: dict, _config: dict) -> None:
        resource(deployment, VPC)["dependencies"].append("urn:pulumi:s::kubeshift::x:y:Z::other")

    assert any(c.endswith("protection") for c in judged(small, checkpoint, protect).changes)
    assert any(c.endswith("dependencies") for c in judged(small, checkpoint, depends).changes)


def test_a_secret_the_export_keeps_encrypted_never_equals(small: dict, checkpoint: tuple) -> None:
    def encrypt(deployment: dict, _config: dict) -> None:
        vpc = resource(deployment, VPC)
        vpc["inputs"]["cidrBlock"] = {SIG: SECRET_SIG, "ciphertext": "v1:abc"}

    def shown(deployment: dict, _config: dict) -> None:
        vpc = resource(deployment, VPC)
        value = json.dumps(vpc["inputs"]["cidrBlock"])
        vpc["inputs"]["cidrBlock"] = {SIG: SECRET_SIG, "plaintext": value}

    assert not judged(small, checkpoint, encrypt).unchanged
    # shown, it is compared as a secret: the program's plain value is a change too
    assert any("cidrBlock" in c for c in judged(small, checkpoint, shown).changes)


def test_operations_an_interrupted_update_left(small: dict, checkpoint: tuple) -> None:
    def pending(deployment: dict, _config: dict) -> None:
        deployment["pending_operations"] = [{"type": "creating", "resource": {}}]

    assert not judged(small, checkpoint, pending).unchanged


def test_targets_take_what_depends_on_a_change_and_nothing_else(
    small: dict, checkpoint: tuple
) -> None:
    vpcs = sorted(r["urn"] for r in checkpoint[0]["resources"] if r["type"] == VPC)
    assert len(vpcs) == 2  # the source's and the target's
    changed, untouched = vpcs

    def edit(deployment: dict, _config: dict) -> None:
        vpc = next(r for r in deployment["resources"] if r["urn"] == changed)
        vpc["inputs"]["cidrBlock"] = vpc["outputs"]["cidrBlock"] = "10.99.0.0/16"

    verdict = judged(small, checkpoint, edit)
    targets = verdict.targets()
    assert targets is not None and targets[0] == verdict.root
    subnets = [
        r["urn"] for r in checkpoint[0]["resources"]
        if r["type"] == "aws:ec2/subnet:Subnet" and changed in r["dependencies"]
    ]  # fmt: skip
    assert changed in targets and subnets and set(subnets) <= set(targets)
    assert untouched not in targets  # the other VPC, a child of the stack as much
    unchanged = judged(small, checkpoint)
    assert unchanged.targets() == [unchanged.root]


def test_a_providers_change_leaves_no_target_set(small: dict, checkpoint: tuple) -> None:
    def region(_deployment: dict, config: dict) -> None:
        config["aws:region"] = "us-east-2"

    verdict = judged(small, checkpoint, region)
    assert verdict.whole and verdict.targets() is None

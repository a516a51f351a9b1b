"""The one way a cluster side is built: names per side and generation, what the load
balancers attach, where records point; and every scenario building its sides through it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pulumi
import pytest

from automation.review.render import RenderedResource, record, render_program
from components import cluster_side
from components.cluster_side import ClusterParts, ClusterSide, ClusterSpec, SideNetwork
from components.contract.naming import Namer
from components.contract.sides import SOURCE, TARGET, Side
from components.load_balancers import DEREGISTRATION_DELAY, LbListener
from components.worker_pools import WorkerPoolSpec
from tests.components.conftest import by_type, rendered, stack_values

ASG = "aws:autoscaling/group:Group"
ATTACHMENT = "aws:autoscaling/attachment:Attachment"
TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"
RECORD = "aws:route53/record:Record"

SPEC = ClusterSpec(
    image_id="ami-12345678",
    api_endpoint="https://api.example.internal:6443",
    api_port=6443,
    ingress_listeners=(LbListener(443, 30443),),
    client_cidrs=("10.0.0.0/16",),
    ingress_internal=True,
    api_internal=True,
    control_plane_instance_type="m5.large",
    etcd_volume_size=20,
    etcd_volume_type="gp3",
    release_etcd_volumes=False,
    dns_zone_id="Z1",
    api_record="api.example.internal",
    ingress_records=("*.apps.example.internal",),
    dns_ttl=60,
    tags={},
)
POOLS = (
    WorkerPoolSpec(
        name="general", instance_types=("m5.large",), azs=("a",), capacity_types=("on-demand",)
    ),
)


def _network(side: Side) -> SideNetwork:
    return SideNetwork(side, f"vpc-{side}", {"a": f"{side}-private-a"}, {"a": "-"}, ("a",))


def _cluster(build: Callable[[ClusterParts], None], **spec: Any) -> list[RenderedResource]:
    """Resources ``build`` declares with the parts of cluster ``prod``, prefix ``c``
    (``spec``: fields of :data:`SPEC` changed)."""

    def program() -> None:
        holder = pulumi.ComponentResource("test:index:Holder", "holder")
        build(ClusterParts("c", Namer("prod"), dataclasses.replace(SPEC, **spec), holder))

    return record(program).resources


def _tags(resource: RenderedResource) -> dict[str, str]:
    return {t["key"]: t["value"] for t in resource.inputs["tags"]}


# --- one side ------------------------------------------------------------------------


def test_a_target_side_names_its_parts_apart() -> None:
    def build(parts: ClusterParts) -> None:
        side = parts.side(_network(TARGET), POOLS, "mig")
        common = side.common()
        assert common.instance_profile_name is not None
        workers = side.workers(common, common)
        side.ingress_lb(common, [workers])

    resources = _cluster(build)
    components = {r.name for r in resources if not r.custom}
    assert {"c-common-mig", "c-workers-mig", "c-ingress-mig"} <= components
    (group,) = by_type(resources, ASG)
    assert group.inputs["name"].endswith("-mig")
    assert _tags(group)["kubeshift.io/generation"] == "mig"
    assert _tags(group)["kubeshift.io/network"] == TARGET
    assert group.inputs["vpcZoneIdentifiers"] == ["target-private-a"]
    # The workers' identity keeps the first side's physical names on every side.
    roles = [r.inputs["name"] for r in by_type(resources, "aws:iam/role:Role")]
    assert roles == ["prod-node-role"]


def test_another_generation_is_named_apart_and_attached_beside_the_first() -> None:
    def build(parts: ClusterParts) -> None:
        side = parts.side(_network(SOURCE), POOLS)
        common = side.common()
        assert common.instance_profile_name is not None
        generations = [side.workers(common, common, generation=g) for g in ("original", "cni")]
        side.ingress_lb(common, generations)

    resources = _cluster(build)
    groups = by_type(resources, ASG)
    for group in groups:
        generation = _tags(group)["kubeshift.io/generation"]
        assert group.inputs["name"].endswith("-cni") is (generation == "cni")
        assert group.parent == ("c-workers-cni" if generation == "cni" else "c-workers")
    attachments = by_type(resources, ATTACHMENT)
    assert {a.inputs["autoscalingGroupName"] for a in attachments} == {
        g.inputs["name"] for g in groups
    }
    keys = {a.name.rsplit("-443-", 1)[1] for a in attachments}
    first = {k for k in keys if not k.startswith("cni-")}
    assert first and keys - first == {f"cni-{k}" for k in first}


def test_each_api_lb_attaches_the_members_on_its_side() -> None:
    def build(parts: ClusterParts) -> None:
        source = parts.side(_network(SOURCE), POOLS)
        target = parts.side(_network(TARGET), POOLS, "mig")
        commons = [s.common(workers=False, node_identity=False) for s in (source, target)]
        # Member 1 has moved to the target side; 2 and 3 are still on the source side.
        members = [
            target.member(1, "a", "10.0.0.1", commons[1]),
            source.member(2, "a", "10.0.0.2", commons[0]),
            source.member(3, "a", "10.0.0.3", commons[0]),
        ]
        identity = parts.identity("control-plane", members, "mig")
        control_plane = parts.control_plane(members, identity, "mig")
        source.api_lb(commons[0], control_plane)
        target.api_lb(commons[1], control_plane)

    resources = _cluster(build)
    members = {g.inputs["name"]: _tags(g)["kubeshift.io/member"] for g in by_type(resources, ASG)}
    attached: dict[str, set[str]] = {}
    for a in by_type(resources, ATTACHMENT):
        attached.setdefault(a.parent or "", set()).add(members[a.inputs["autoscalingGroupName"]])
    assert attached == {"c-api": {"2", "3"}, "c-api-mig": {"1"}}


@pytest.mark.parametrize("alias", [False, True])
def test_the_api_record_names_its_load_balancer_as_the_cluster_made_it(alias: bool) -> None:
    """A CNAME to the API load balancer, or kops's alias A record to it: whichever
    load balancer it names, its type stays (no record ever changes type)."""

    def build(parts: ClusterParts) -> None:
        side = parts.side(_network(SOURCE), POOLS)
        common = side.common()
        members = [side.member(1, "a", "10.0.0.10", common)]
        control_plane = parts.control_plane(members, parts.identity("control-plane", members))
        ingress = side.ingress_lb(common, [])
        parts.dns(parts.records(ingress, side.api_lb(common, control_plane)))

    resources = by_type(_cluster(build, api_alias=alias), RECORD)
    records = {r.inputs["name"]: r.inputs for r in resources}
    assert records["*.apps.example.internal"]["type"] == "CNAME"
    api = records["api.example.internal"]
    if alias:
        assert api["type"] == "A" and "records" not in api
        assert api["aliases"][0]["name"] == "prod-api.elb.us-east-1.amazonaws.com"
    else:
        assert api["type"] == "CNAME"
        assert api["records"] == ["prod-api.elb.us-east-1.amazonaws.com"]
    assert len(records) == 2


# --- every scenario builds its sides this way ---------------------------------------


@contextmanager
def _sides_built() -> Iterator[list[tuple[str, str, str]]]:
    """Record (prefix, suffix, part) of every part a :class:`ClusterSide` declares."""
    calls: list[tuple[str, str, str]] = []
    originals = {
        part: getattr(ClusterSide, part) for part in ("common", "workers", "ingress_lb", "api_lb")
    }

    def spy(part: str) -> Callable[..., Any]:
        def wrapper(self: ClusterSide, *args: Any, **kwargs: Any) -> Any:
            calls.append((self.parts.prefix, self.suffix, part))
            return originals[part](self, *args, **kwargs)

        return wrapper

    with pytest.MonkeyPatch.context() as patch:
        for part in originals:
            patch.setattr(cluster_side.ClusterSide, part, spy(part))
        yield calls


def test_vpc_move_target_side_and_the_mirror_are_built_alike() -> None:
    with _sides_built() as calls:
        render_program(stack_values("vpc-move-small"), "control-plane-1")
        render_program(stack_values("cni-swap-example"), "mirror-cluster")
    every_part = {"common", "workers", "ingress_lb", "api_lb"}
    target = {part for prefix, suffix, part in calls if (prefix, suffix) == ("demo", "mig")}
    mirror = {part for prefix, suffix, part in calls if prefix == "shop-euw1-mirror"}
    assert target == mirror == every_part


@pytest.mark.parametrize(
    ("stack", "phase"),
    [
        ("vpc-move-small", "control-plane-1"),
        ("cni-swap-example", "mirror-cluster"),
        ("overlay-switch-example", "routes"),
    ],
)
def test_target_groups_are_one_definition(stack: str, phase: str) -> None:
    """API and ingress target groups of every side drain and check health alike."""
    groups = by_type(rendered(stack, phase).resources, TARGET_GROUP)
    assert any("-api-" in g.inputs["name"] for g in groups)
    assert {g.inputs["deregistrationDelay"] for g in groups} == {DEREGISTRATION_DELAY}
    settings = {
        repr({k: v for k, v in g.inputs.items() if k not in {"name", "port", "tags", "vpcId"}})
        for g in groups
    }
    assert len(settings) == 1

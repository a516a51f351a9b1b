"""Worker pools: one ASG per type x AZ x capacity, labels/taints in user data, cluster tags."""

from __future__ import annotations

import base64
import dataclasses

from automation.review.render import record
from components.contract import policy
from components.contract.naming import Namer
from components.worker_pools import WorkerPools, WorkerPoolsArgs, WorkerPoolSpec
from tests.components.conftest import by_type

POOL = WorkerPoolSpec(
    name="memory",
    instance_types=("r5.large", "r6i.large"),
    azs=("a", "b", "c"),
    labels=(("workload", "memory"),),
    taints=(("workload", "memory", "NoSchedule"),),
    desired_size=2,
)


def _render(**overrides: object) -> list:
    args: dict[str, object] = dict(
        namer=Namer("prod", "mig"),
        pools=[POOL],
        subnet_ids={"a": "s-a", "b": "s-b", "c": "s-c"},
        security_group_ids=["sg-node", "sg-shared"],
        instance_profile_name="prod-node-profile",
        image_id="ami-12345678",
        api_endpoint="https://api.example.com:6443",
        generation="mig",
        network_label="target",
    )
    args.update(overrides)
    return record(lambda: WorkerPools("w", WorkerPoolsArgs(**args))).resources  # type: ignore[arg-type]


def _tags(group) -> dict[str, str]:
    return {t["key"]: t["value"] for t in group.inputs["tags"]}


def test_one_group_per_type_az_and_capacity() -> None:
    resources = _render()
    groups = by_type(resources, "aws:autoscaling/group:Group")
    assert len(groups) == 2 * 3 * 2
    assert len(by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")) == 2
    names = {g.inputs["name"] for g in groups}
    assert "prod-workers-memory-r5-large-b-spot-mig" in names
    spot = next(g for g in groups if g.inputs["name"] == "prod-workers-memory-r5-large-b-spot-mig")
    policy_ = spot.inputs["mixedInstancesPolicy"]
    assert policy_["instancesDistribution"]["onDemandPercentageAboveBaseCapacity"] == 0
    assert policy_["launchTemplate"]["overrides"] == [{"instanceType": "r5.large"}]
    assert spot.inputs["vpcZoneIdentifiers"] == ["s-b"]
    assert spot.inputs["desiredCapacity"] == 2
    assert "desiredCapacity" in spot.options["ignoreChanges"]
    on_demand = next(g for g in groups if g.inputs["name"].endswith("-a-on-demand-mig"))
    od = on_demand.inputs["mixedInstancesPolicy"]["instancesDistribution"]
    assert od["onDemandPercentageAboveBaseCapacity"] == 100
    assert policy.asgs_tagged(resources, "prod") == []
    tags = _tags(spot)
    assert tags["kubeshift.io/network"] == "target"
    assert tags["k8s.io/cluster-autoscaler/node-template/taint/workload"] == "memory:NoSchedule"


def test_a_pool_grouped_per_capacity_has_one_group_spanning_its_zones_and_types() -> None:
    spanning = dataclasses.replace(POOL, group_per="capacity")
    resources = _render(pools=[spanning])
    groups = {g.inputs["name"]: g for g in by_type(resources, "aws:autoscaling/group:Group")}
    assert sorted(groups) == ["prod-workers-memory-on-demand-mig", "prod-workers-memory-spot-mig"]
    spot = groups["prod-workers-memory-spot-mig"]
    assert spot.inputs["vpcZoneIdentifiers"] == ["s-a", "s-b", "s-c"]
    overrides = spot.inputs["mixedInstancesPolicy"]["launchTemplate"]["overrides"]
    assert overrides == [{"instanceType": "r5.large"}, {"instanceType": "r6i.large"}]
    assert spot.inputs["desiredCapacity"] == 2
    assert _tags(spot)["kubeshift.io/pool"] == "memory"
    assert len(by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")) == 2


def test_a_template_names_the_pools_first_type_and_its_metadata_hop_limit() -> None:
    resources = _render(pools=[dataclasses.replace(POOL, metadata_hop_limit=1)])
    templates = by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
    assert len(templates) == len(POOL.capacity_types)  # one per capacity type
    for template in templates:
        assert template.inputs["instanceType"] == "r5.large"
        assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
        assert template.inputs["metadataOptions"]["httpTokens"] == "required"


def test_labels_and_taints_reach_the_kubelet() -> None:
    resources = _render()
    templates = {
        t.inputs["name"]: t for t in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
    }
    script = base64.b64decode(templates["prod-workers-memory-spot-mig"].inputs["userData"]).decode()
    assert "--register-with-taints=workload=memory:NoSchedule" in script
    assert "kubeshift.io/generation=mig" in script
    assert "node.kubernetes.io/lifecycle=spot" in script
    assert "workload=memory" in script
    assert templates["prod-workers-memory-spot-mig"].inputs["iamInstanceProfile"] == {
        "name": "prod-node-profile"
    }


def test_suspended_processes() -> None:
    groups = by_type(_render(suspended_processes=["Launch"]), "aws:autoscaling/group:Group")
    expected = len(POOL.instance_types) * len(POOL.azs) * len(POOL.capacity_types)
    assert [g.inputs["suspendedProcesses"] for g in groups] == [["Launch"]] * expected


def test_a_pool_of_one_on_demand_type_launches_from_its_template_alone() -> None:
    """As a kops instance group of one machine type: the template's type, no policy."""
    single = dataclasses.replace(POOL, instance_types=("r5.large",))
    groups = {
        g.inputs["name"]: g for g in by_type(_render(pools=[single]), "aws:autoscaling/group:Group")
    }
    on_demand = groups["prod-workers-memory-r5-large-a-on-demand-mig"]
    assert "mixedInstancesPolicy" not in on_demand.inputs
    assert set(on_demand.inputs["launchTemplate"]) == {"id", "version"}
    spot = groups["prod-workers-memory-r5-large-a-spot-mig"]  # spot still mixes
    assert "launchTemplate" not in spot.inputs
    assert (
        spot.inputs["mixedInstancesPolicy"]["instancesDistribution"][
            "onDemandPercentageAboveBaseCapacity"
        ]
        == 0
    )


def test_a_pool_with_a_template_per_group_launches_each_group_from_its_own() -> None:
    """As seed 001's Terraform modules made them: each group's template names its type
    and, for spot, the spot market; no group mixes."""
    own = dataclasses.replace(POOL, template_per="group")
    resources = _render(pools=[own])
    groups = by_type(resources, "aws:autoscaling/group:Group")
    templates = {
        t.inputs["name"]: t for t in by_type(resources, "aws:ec2/launchTemplate:LaunchTemplate")
    }
    assert len(groups) == len(templates) == 2 * 3 * 2
    assert {g.inputs["name"] for g in groups} == set(templates)  # one each, named alike
    for group in groups:
        assert "mixedInstancesPolicy" not in group.inputs
        assert set(group.inputs["launchTemplate"]) == {"id", "version"}
    spot = templates["prod-workers-memory-r6i-large-c-spot-mig"]
    assert spot.inputs["instanceType"] == "r6i.large"
    assert spot.inputs["instanceMarketOptions"] == {"marketType": "spot"}
    on_demand = templates["prod-workers-memory-r6i-large-c-on-demand-mig"]
    assert on_demand.inputs["instanceType"] == "r6i.large"
    assert "instanceMarketOptions" not in on_demand.inputs
    script = base64.b64decode(spot.inputs["userData"]).decode()
    assert "node.kubernetes.io/lifecycle=spot" in script
    assert policy.asgs_tagged(resources, "prod") == []

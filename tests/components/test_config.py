"""Stack configuration: valid stacks load; each mistake is one sentence naming the key."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from components.contract.loading import load_config, load_stack_file
from components.contract.model_base import ConfigError
from tests.components.conftest import STACKS, stack_values

Values = dict[str, Any]


def _cluster(v: Values) -> Values:
    return v["kubeshift:cluster"]


def _target(v: Values) -> Values:
    return v["kubeshift:migration"]["target_network"]


def _set(path: str, value: Any) -> Callable[[Values], None]:
    """Mutation setting a dotted path (``kubeshift:cluster.network.cidr``)."""
    top, *rest = path.split(".")

    def mutate(v: Values) -> None:
        node = v[top] if rest else v
        keys = rest or [top]
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        last = keys[-1]
        if value is _DELETE:
            del node[last]
        else:
            node[int(last) if last.isdigit() else last] = value

    return mutate


_DELETE = object()

CASES: list[tuple[str, Callable[[Values], None], str, str]] = [
    (
        "overlapping-cidrs",
        _set("kubeshift:migration.target_network.cidr", "10.0.0.0/16"),
        "kubeshift:migration.target_network.cidr",
        "kubeshift:migration.target_network.cidr 10.0.0.0/16 overlaps the source VPC 10.0.0.0/16.",
    ),
    (
        "source-subnet-outside-vpc",
        _set("kubeshift:cluster.network.private_subnets.1", "10.9.0.0/19"),
        "kubeshift:cluster.network.private_subnets[1]",
        "outside its VPC 10.0.0.0/16",
    ),
    (
        "target-subnet-outside-vpc",
        _set("kubeshift:migration.target_network.public_subnets.0", "10.0.0.0/20"),
        "kubeshift:migration.target_network.public_subnets[0]",
        "outside its VPC 10.20.0.0/16",
    ),
    (
        "unknown-scenario",
        _set("kubeshift:scenario", "vpc-teleport"),
        "kubeshift:scenario",
        "is not a known scenario",
    ),
    (
        "unknown-phase",
        _set("kubeshift:phase", "control-plane-4"),
        "kubeshift:phase",
        "is not a phase of vpc-move",
    ),
    (
        "even-members",
        _set("kubeshift:cluster.control_plane.members", 4),
        "kubeshift:cluster.control_plane.members",
        "odd number of members",
    ),
    (
        "too-few-members",
        _set("kubeshift:cluster.control_plane.members", 1),
        "kubeshift:cluster.control_plane.members",
        "from 3 to 7",
    ),
    (
        "hundreds-of-members",
        _set("kubeshift:cluster.control_plane.members", 999),
        "kubeshift:cluster.control_plane.members",
        "from 3 to 7",
    ),
    (
        "vpc-too-large",
        _set("kubeshift:cluster.network.cidr", "10.0.0.0/8"),
        "kubeshift:cluster.network.cidr",
        "a VPC is a /16 to /28",
    ),
    (
        "az-of-another-region",
        _set("kubeshift:cluster.network.azs", ["eu-west-1a", "eu-west-1b"]),
        "kubeshift:cluster.network.azs",
        "'eu-west-1a' is not an availability zone of us-west-2",
    ),
    (
        "empty-zone-id",
        _set("kubeshift:cluster.dns.zone_id", ""),
        "kubeshift:cluster.dns.zone_id",
        "is not a Route53 hosted zone id",
    ),
    (
        "lower-case-zone-id",
        _set("kubeshift:cluster.dns.zone_id", "z0123456789abcdefghij"),
        "kubeshift:cluster.dns.zone_id",
        "kubeshift:cluster.dns.zone_id 'z0123456789abcdefghij' is not a Route53 hosted zone id "
        "('Z' then upper-case letters and digits, e.g. Z0123456789ABCDEFGHIJ).",
    ),
    (
        "zone-id-not-starting-with-z",
        _set("kubeshift:cluster.dns.zone_id", "/hostedzone/A0123456789ABCDEFGHIJ"),
        "kubeshift:cluster.dns.zone_id",
        "'/hostedzone/A0123456789ABCDEFGHIJ' is not a Route53 hosted zone id",
    ),
    (
        "aws-tag-prefix",
        _set("kubeshift:cluster.tags", {"aws:cloudformation:stack-name": "x"}),
        "kubeshift:cluster.tags",
        "reserved by AWS",
    ),
    (
        "dns-name-too-long",
        _set("kubeshift:cluster.dns.api_record", ("a" * 60 + ".") * 5 + "example.com"),
        "kubeshift:cluster.dns.api_record",
        "at most 253 characters",
    ),
    (
        "invalid-label-key",
        _set("kubeshift:cluster.worker_pools.0.labels", {"bad key!": "x"}),
        "kubeshift:cluster.worker_pools[0].labels",
        "not a valid Kubernetes key",
    ),
    (
        "invalid-taint-key",
        _set("kubeshift:cluster.worker_pools.0.taints", [{"key": "-dedicated", "value": "x"}]),
        "kubeshift:cluster.worker_pools[0].taints[0]",
        "not a valid Kubernetes key",
    ),
    (
        "capacity-types-twice",
        _set("kubeshift:cluster.worker_pools.0.capacity_types", ["spot", "spot"]),
        "kubeshift:cluster.worker_pools[0].capacity_types",
        "lists a type twice",
    ),
    (
        "pool-az-twice",
        _set("kubeshift:cluster.worker_pools.0.azs", ["us-west-2a", "us-west-2a"]),
        "kubeshift:cluster.worker_pools[0].azs",
        "lists an AZ twice",
    ),
    (
        "listener-port-twice",
        _set(
            "kubeshift:cluster.ingress",
            {"listeners": [{"port": 80, "node_port": 30080}, {"port": 80, "node_port": 30081}]},
        ),
        "kubeshift:cluster.ingress.listeners",
        "uses port 80 twice",
    ),
    (
        "node-port-twice",
        _set(
            "kubeshift:cluster.ingress",
            {"listeners": [{"port": 80, "node_port": 30080}, {"port": 443, "node_port": 30080}]},
        ),
        "kubeshift:cluster.ingress.listeners",
        "uses node_port 30080 twice",
    ),
    (
        "misspelt-block",
        _set("kubeshift:runtme", {"probe_services": []}),
        "kubeshift:runtme",
        "did you mean 'kubeshift:runtime'?",
    ),
    (
        "typo-suggests-the-field",
        _set("kubeshift:cluster.control_plane.instance_typ", "m5.large"),
        "kubeshift:cluster.control_plane.instance_typ",
        "did you mean 'instance_type'?",
    ),
    (
        "empty-instance-types",
        _set("kubeshift:cluster.worker_pools.0.instance_types", []),
        "kubeshift:cluster.worker_pools[0].instance_types",
        "is empty",
    ),
    (
        "suffix-with-underscore",
        _set("kubeshift:migration.suffix", "new_vpc"),
        "kubeshift:migration.suffix",
        "cannot be carried by AWS names",
    ),
    (
        "suffix-too-long",
        _set("kubeshift:migration.suffix", "migration-2025-q4"),
        "kubeshift:migration.suffix",
        "cannot be carried by AWS names",
    ),
    (
        "suffix-empty",
        _set("kubeshift:migration.suffix", ""),
        "kubeshift:migration.suffix",
        "cannot be carried by AWS names",
    ),
    (
        "bad-cidr",
        _set("kubeshift:cluster.network.cidr", "10.0.0.1/16"),
        "kubeshift:cluster.network.cidr",
        "is invalid",
    ),
    (
        "missing-target-network",
        _set("kubeshift:migration.target_network", _DELETE),
        "kubeshift:migration.target_network",
        "is required for the vpc-move scenario",
    ),
    (
        "typo-key",
        _set("kubeshift:cluster.worker_pools.0.instance_type", ["m5.large"]),
        "kubeshift:cluster.worker_pools[0].instance_type",
        "is not a known setting",
    ),
    (
        "subnets-per-az",
        _set("kubeshift:cluster.network.public_subnets", ["10.0.0.0/20"]),
        "kubeshift:cluster.network.public_subnets",
        "give exactly one per AZ",
    ),
    (
        "cluster-name",
        _set("kubeshift:cluster.name", "Prod_Cluster"),
        "kubeshift:cluster.name",
        "lower-case letters",
    ),
    (
        "missing-phase",
        _set("kubeshift:phase", _DELETE),
        "kubeshift:phase",
        "is required",
    ),
    (
        "unknown-group-split",
        _set("kubeshift:cluster.worker_pools.0.group_per", "zone"),
        "kubeshift:cluster.worker_pools[0].group_per",
        "type-zone-capacity",
    ),
    (
        "own-templates-of-spanning-groups",
        lambda v: v["kubeshift:cluster"]["worker_pools"][0].update(
            group_per="capacity", template_per="group"
        ),
        "kubeshift:cluster.worker_pools[0].template_per",
        "needs group_per type-zone-capacity",
    ),
    (
        "etcd-names-of-static-members",
        lambda v: v["kubeshift:cluster"]["control_plane"].update(etcd_names=["a", "b", "c"]),
        "kubeshift:cluster.control_plane.etcd_names",
        "set membership: etcd-manager too",
    ),
    (
        "etcd-names-one-short",
        lambda v: v["kubeshift:cluster"]["control_plane"].update(
            membership="etcd-manager", etcd_names=["a", "b"]
        ),
        "kubeshift:cluster.control_plane.etcd_names",
        "different names, one per member",
    ),
    (
        "etcd-name-not-in-dns",
        lambda v: v["kubeshift:cluster"]["control_plane"].update(
            membership="etcd-manager", etcd_names=["a", "b", "C_3"]
        ),
        "kubeshift:cluster.control_plane.etcd_names",
        "end up in DNS names",
    ),
    (
        "member-az-not-in-target",
        _set("kubeshift:migration.target_network.azs", ["us-west-2a", "us-west-2c"]),
        "kubeshift:cluster.control_plane.azs",
        "etcd volume cannot leave its AZ",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "key", "fragment"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_validation_errors(small_values: Values, mutate: Any, key: str, fragment: str) -> None:
    mutate(small_values)
    with pytest.raises(ConfigError) as caught:
        load_config(small_values)
    message = str(caught.value)
    assert caught.value.key == key
    assert fragment in message
    assert message.startswith(key.split(".")[0])
    assert message.endswith((".", "?")) and "\n" not in message


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS.glob("Pulumi.*.yaml")
    ),
)
def test_every_stack_file_is_valid(name: str) -> None:
    config = load_config(stack_values(name))
    assert config.phase in config.phase_ids


def test_objects_may_arrive_as_json_strings(small_values: Values) -> None:
    import json

    raw = copy.deepcopy(small_values)
    raw["kubeshift:cluster"] = json.dumps(raw["kubeshift:cluster"])
    assert load_config(raw).cluster.name == "demo"


def test_unknown_top_level_keys_are_ignored(small_values: Values) -> None:
    small_values["kubeshift:runtime"] = {"anything": True}
    assert load_config(small_values).scenario == "vpc-move"


def test_missing_stack_file_is_a_config_error(tmp_path: Any) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_stack_file(tmp_path / "Pulumi.nope.yaml")


def test_a_pool_starts_a_node_per_desired_size_in_each_of_its_groups(small_values: Values) -> None:
    pool = _cluster(small_values)["worker_pools"][0]
    pool.update(instance_types=["m5.large", "m5a.large"], capacity_types=["on-demand", "spot"])
    pool.update(azs=None, desired_size=2)
    azs = ["us-west-2a", "us-west-2b", "us-west-2c"]
    split = load_config(small_values).cluster.worker_pools[0]
    assert (split.group_count(azs), split.starting_nodes(azs)) == (12, 24)
    pool["group_per"] = "capacity"
    spanning = load_config(small_values).cluster.worker_pools[0]
    assert (spanning.group_count(azs), spanning.starting_nodes(azs)) == (2, 4)


@pytest.mark.parametrize(
    ("host_index", "expected"),
    [
        (11, "gives the mirror's members addresses of the primary's"),
        (8190, "puts mirror member 2 outside 10.30.64.0/19"),
    ],
)
def test_a_mirror_host_index_must_clear_the_primarys_members_and_fit(
    host_index: int, expected: str
) -> None:
    values = copy.deepcopy(stack_values("cni-swap-example"))
    values["kubeshift:migration"]["mirror"]["host_index"] = host_index
    with pytest.raises(ConfigError) as refused:
        load_config(values)
    assert refused.value.key == "kubeshift:migration.mirror.host_index"
    assert expected in str(refused.value)


def test_the_mirrors_members_sit_where_its_host_index_says() -> None:
    from components.baseline import members
    from components.contract.placement import mirror_host_offset

    config = load_config(stack_values("cni-swap-example"))
    assert [m.address for m in members(config, mirror_host_offset(config))] == [
        "10.30.48.10", "10.30.80.11", "10.30.112.12"
    ]  # fmt: skip
    values = copy.deepcopy(stack_values("cni-swap-example"))
    del values["kubeshift:migration"]["mirror"]["host_index"]
    default = load_config(values)
    assert [m.address for m in members(default, mirror_host_offset(default))] == [
        "10.30.32.13", "10.30.64.14", "10.30.96.15"
    ]  # fmt: skip


def test_an_api_record_of_any_length_dns_allows_is_taken(small_values: Values) -> None:
    """kubeshift names no record under the API's (the record only changes target)."""
    long_name = ("a" * 60 + ".") * 3 + "b" * 55 + ".example"
    assert len(long_name) <= 253
    for alias in (False, True):
        small_values["kubeshift:cluster"]["dns"].update(api_record=long_name, api_alias=alias)
        assert load_config(small_values).cluster.dns.api_record == long_name


def test_a_mirror_of_a_cluster_booting_another_tools_script_names_its_own_image() -> None:
    """The mirror's nodes boot kubeshift's node.env; an adopted cluster's image runs its
    own tool's bootstrap (kops's nodeup), so nothing on it would read node.env."""
    values = copy.deepcopy(stack_values("cni-swap-example"))
    del values["kubeshift:migration"]["mirror"]["image_id"]
    assert load_config(values).migration.mirror is not None  # kubeshift's own cluster: its image
    values["kubeshift:cluster"]["user_data"] = {"shop-euw1-workers-general-spot": "#!/bin/bash\n"}
    with pytest.raises(ConfigError) as refused:
        load_config(values)
    assert refused.value.key == "kubeshift:migration.mirror.image_id"
    assert "need not read kubeshift's node.env" in str(refused.value)
    values["kubeshift:migration"]["mirror"]["image_id"] = "ami-0feedcafe0000001"
    assert load_config(values).migration.mirror.image_id == "ami-0feedcafe0000001"

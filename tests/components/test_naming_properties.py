"""Physical names over every valid cluster name and the roles the program gives: within
the kind's limits, deterministic, distinct per role, and — on the original side —
recognised as kubeshift's by the kept-name check (Hypothesis, derandomized)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from components.contract.checks import CLUSTER_NAME_MAX
from components.contract.naming import (
    NameKind,
    Namer,
    check_name,
    given_to,
    kind_key,
    physical_name,
)

clusters = st.from_regex(rf"[a-z][a-z0-9-]{{0,{CLUSTER_NAME_MAX - 2}}}[a-z0-9]", fullmatch=True)
pools = st.from_regex(r"[a-z][a-z0-9-]{0,22}[a-z0-9]", fullmatch=True)
instance_types = st.sampled_from(["m5.large", "m5a.2xlarge", "c6gn.16xlarge", "t3.micro"])
zones = st.sampled_from(["us-east-1a", "eu-central-1c", "ap-southeast-2b", "us-gov-west-1a"])
capacities = st.sampled_from(["on-demand", "spot"])
balancer_roles = st.one_of(
    st.sampled_from(["api", "ingress"]),
    st.builds(
        lambda side, port: f"{side}-{port}",
        st.sampled_from(["api", "ingress"]),
        st.integers(1, 65535),
    ),
)
"""A load balancer's role, or its target group's (the role and the listener's port)."""
roles = st.one_of(
    balancer_roles,
    st.builds(  # a group per type, AZ and capacity: worker_pools.group_key
        lambda pool, kind, zone, cap: f"workers-{pool}-{kind.replace('.', '-')}-{zone}-{cap}",
        pools,
        instance_types,
        zones,
        capacities,
    ),
    st.builds(lambda pool, cap: f"workers-{pool}-{cap}", pools, capacities),
    st.builds(lambda n: f"control-plane-{n}", st.integers(1, 9)),
    st.builds(lambda n: f"etcd-{n}", st.integers(1, 9)),
    st.sampled_from(["node-profile", "control-plane-role", "shared", "node"]),
)
suffixes = st.sampled_from(["", "mig", "m2", "migration-b"])
BALANCERS = (NameKind.LOAD_BALANCER, NameKind.TARGET_GROUP)


@st.composite
def named(draw: st.DrawFn) -> tuple[NameKind, str]:
    """A kind and a role the program names with it (balancers' kinds: balancer roles)."""
    kind = draw(st.sampled_from(list(NameKind)))
    return kind, draw(balancer_roles if kind in BALANCERS else roles)


@given(cluster=clusters, kind_role=named(), suffix=suffixes)
def test_every_name_fits_its_kind_and_is_the_same_each_time(
    cluster: str, kind_role: tuple[NameKind, str], suffix: str
) -> None:
    kind, role = kind_role
    name = physical_name(cluster, role, suffix, kind=kind)
    check_name(name, kind)  # raises where AWS would refuse it
    assert len(name) <= kind.value.max_length
    assert physical_name(cluster, role, suffix, kind=kind) == name
    if suffix:
        assert name.endswith(f"-{suffix}")  # a migration's duplicate says which it is


@given(cluster=clusters, kind_role=named())
def test_the_original_sides_names_are_recognised_and_kept_under_them(
    cluster: str, kind_role: tuple[NameKind, str]
) -> None:
    """What ``adopt --write-config`` keys a kept name by passes the stack's own check,
    however the kind's limit cut it, and the program then gives the live name."""
    kind, role = kind_role
    derived = physical_name(cluster, role, kind=kind)
    assert given_to(cluster, derived)
    live = "kept-by-another-tool"
    namer = Namer.of(cluster, {f"{kind_key(kind)}:{derived}": live})
    assert namer.name(role, kind) == live


@given(cluster=clusters, suffix=suffixes, data=st.data())
def test_distinct_roles_never_share_a_name(cluster: str, suffix: str, data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(list(NameKind)))
    drawn = data.draw(st.lists(balancer_roles if kind in BALANCERS else roles, min_size=2,
                               max_size=6, unique=True))  # fmt: skip
    names = [physical_name(cluster, role, suffix, kind=kind) for role in drawn]
    assert len(set(names)) == len(drawn), names

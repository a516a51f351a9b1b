"""Physical names: deterministic, unique, within AWS limits for any valid cluster name."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from components.contract.naming import NameKind, Namer, check_name, physical_name

CLUSTERS = [
    "a1",
    "prod",
    "x" * 40,
    "internal-payments-eu-west-1-production-a",
    "k8s-" + "ab-" * 12,
]
SUFFIXES = ["", "m", "migration", "mig-2025-abc"]
ROLES = ["ingress", "api", "ingress-443", "api-6443", "workers-general-m5-2xlarge-a-spot"]


@pytest.mark.parametrize("kind", list(NameKind), ids=lambda k: k.name)
@pytest.mark.parametrize("cluster", CLUSTERS, ids=lambda c: f"len{len(c.rstrip('-'))}")
def test_names_fit_and_are_unique(kind: NameKind, cluster: str) -> None:
    cluster = cluster.rstrip("-")
    names = {
        physical_name(cluster, role, suffix, kind=kind)
        for role, suffix in itertools.product(ROLES, SUFFIXES)
    }
    assert len(names) == len(ROLES) * len(SUFFIXES)
    for name in names:
        check_name(name, kind)
        assert len(name) <= kind.value.max_length


def test_short_names_are_readable() -> None:
    assert physical_name("prod", "ingress", "mig", kind=NameKind.LOAD_BALANCER) == (
        "prod-ingress-mig"
    )
    assert Namer("prod").autoscaling_group("workers") == "prod-workers"


def test_long_names_keep_suffix_and_are_stable() -> None:
    cluster = "c" * 40
    first = physical_name(cluster, "ingress-443", "migration", kind=NameKind.TARGET_GROUP)
    again = physical_name(cluster, "ingress-443", "migration", kind=NameKind.TARGET_GROUP)
    assert first == again
    assert first.endswith("-migration")
    assert len(first) <= 32


def test_load_balancer_names_never_start_with_internal() -> None:
    name = physical_name("internal", "api", "", kind=NameKind.LOAD_BALANCER)
    assert not name.startswith("internal-")


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("a" * 33, NameKind.LOAD_BALANCER),
        ("has_underscore", NameKind.TARGET_GROUP),
        ("internal-x", NameKind.LOAD_BALANCER),
        ("-lead", NameKind.LOAD_BALANCER),
        ("r" * 65, NameKind.IAM_ROLE),
        ("sg-abc", NameKind.SECURITY_GROUP),
    ],
    ids=["lb-too-long", "tg-underscore", "lb-internal", "lb-leading-hyphen", "iam-65", "sg-prefix"],
)
def test_check_name_refuses(name: str, kind: NameKind) -> None:
    with pytest.raises(ValueError):
        check_name(name, kind)


def test_every_side_and_generation_of_an_adopted_cluster_boots_the_kept_script() -> None:
    """New workers and moved members boot as the adopted cluster's nodes do (kops's
    nodeup reads its instance group's configuration); a mirror is another cluster."""
    role = "workers-general-spot"
    derived = physical_name("shop", role, kind=NameKind.LAUNCH_TEMPLATE)
    adopted = Namer.of("shop", {}, user_data={derived: "#!/bin/bash\nnodeup\n"})

    assert adopted.kept_user_data(role) == "#!/bin/bash\nnodeup\n"
    assert replace(adopted, suffix="vpc2").kept_user_data(role) == "#!/bin/bash\nnodeup\n"
    assert replace(adopted, suffix="cni").kept_user_data(role) == "#!/bin/bash\nnodeup\n"
    assert adopted.kept_user_data("workers-batch-spot") is None  # a pool kubeshift adds
    assert Namer("shop", "mirror").kept_user_data(role) is None

"""A kubelet starts only where its image's bootstrap finds what it needs: kops's nodeup,
its instance group's file in the state store (moto's S3) under the hash its script
names; kubeshift's node.env, an image built to read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.sandbox.boots import (
    Boots,
    declared_images,
    images_argument,
    nodeup_config_key,
    parse_images,
)
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.kops import STATE_STORE, domain, nodeup_script
from automation.sandbox.world.model import KopsCluster
from automation.sandbox.world.state_store import StateStore
from components.contract import userdata
from components.contract.loading import load_config, load_stack_file
from tests.support.moto_fixtures import MotoServer
from tests.support.nodes import unique_name

LOCAL = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.local.yaml"
STOCK = "ami-0a0a0a0a0a0a0a0a0"
KUBESHIFT = "ami-0b0b0b0b0b0b0b0b0"
SEED_IMAGE = "ami-0d0d0d0d0d0d0d0d0"
IMAGES = {STOCK: "cloud-init", KUBESHIFT: "node-env"}


def _store(moto: MotoServer) -> tuple[StateStore, str]:
    """kops's state store for the local stack's cluster under a name of its own."""
    config = load_config(load_stack_file(LOCAL))
    spec = config.cluster.model_copy(update={"name": unique_name("boots")})
    cluster = KopsCluster(spec, moto.region, calico=False)
    return StateStore(Aws(moto.region, moto.endpoint_url), cluster), cluster.domain


def _node_env_script() -> str:
    return userdata.node_script(
        cluster_name="c", api_endpoint="https://api.c:443", labels={"team": "a"}, taints=[]
    )


def test_nodeup_joins_with_its_groups_labels_and_taints_from_the_state_store(
    moto: MotoServer,
) -> None:
    store, dns = _store(moto)
    labels = {"kops.k8s.io/instancegroup": "general", "team": "platform"}
    config_hash = store.instance_group("general", "Node", labels, ["dedicated=batch:NoSchedule"])
    boots = Boots(IMAGES, moto.client("s3"))

    kubelet = boots.kubelet(STOCK, nodeup_script("general", dns, config_hash=config_hash))

    assert kubelet.problem == ""
    assert kubelet.labels == labels
    assert kubelet.taints == (("dedicated", "batch", "NoSchedule"),)
    # nodeup fetches itself: an image made for node.env runs it just the same
    assert boots.kubelet(KUBESHIFT, nodeup_script("general", dns, config_hash=config_hash))
    assert not boots.kubelet(
        KUBESHIFT, nodeup_script("general", dns, config_hash=config_hash)
    ).problem


def test_nodeup_stops_without_its_groups_file_or_when_the_hash_differs(moto: MotoServer) -> None:
    store, dns = _store(moto)
    config_hash = store.instance_group("general", "Node", {"team": "platform"})
    boots = Boots(IMAGES, moto.client("s3"))

    unknown_group = boots.kubelet(STOCK, nodeup_script("other", dns, config_hash=config_hash))
    stale = boots.kubelet(STOCK, nodeup_script("general", dns, config_hash="c3RhbGU="))
    other_cluster = boots.kubelet(
        STOCK, nodeup_script("general", domain("elsewhere"), config_hash=config_hash)
    )

    assert unknown_group.problem == (
        f"nodeup: error loading NodeupConfig s3://{STATE_STORE}/"
        f"{nodeup_config_key(dns, 'Node', 'other')}"
    )
    assert stale.problem.startswith("nodeup: nodeup config hash mismatch")
    assert other_cluster.problem.startswith("nodeup: error loading Cluster")


def test_node_env_needs_an_image_built_to_read_it() -> None:
    boots = Boots(IMAGES)

    on_stock = boots.kubelet(STOCK, _node_env_script())
    on_kubeshift = boots.kubelet(KUBESHIFT, _node_env_script())
    unknown = boots.kubelet("ami-0c0c0c0c0c0c0c0c0", _node_env_script())
    foreign = boots.kubelet(KUBESHIFT, "#!/bin/bash\n/etc/eks/bootstrap.sh c\n")

    assert (
        "nothing on it reads" in on_stock.problem and "/etc/kubeshift/node.env" in on_stock.problem
    )
    assert on_kubeshift.problem == ""
    assert unknown.problem.startswith("image ami-0c0c0c0c0c0c0c0c0 is none the sandbox knows")
    assert foreign.problem == (
        "its user data runs neither kops's nodeup, kubeshift's node.env nor the image's "
        "/opt/bootstrap/join"
    )


def test_a_join_image_starts_the_kubelet_its_join_script_is_called_for() -> None:
    """Seed 001's image (Packer-built) carries its own join script: a boot script that
    calls it joins; one that leaves kubeshift's node.env does not (nothing reads it)."""
    joining = "#!/bin/bash\n/opt/bootstrap/join --cluster c --node-labels team=a\n"
    boots = Boots({SEED_IMAGE: "join"})

    assert boots.kubelet(SEED_IMAGE, joining).problem == ""
    assert "nothing on it reads" in boots.kubelet(SEED_IMAGE, _node_env_script()).problem
    assert boots.kubelet(STOCK, joining).problem.startswith(f"image {STOCK} is none")


def test_the_images_each_world_declares_and_how_the_supervisor_reads_them() -> None:
    kops = declared_images(STOCK, KUBESHIFT, cluster_boot="cloud-init")
    built = declared_images(STOCK, None, cluster_boot="node-env")
    modules = declared_images(SEED_IMAGE, None, cluster_boot="join")

    assert kops == {STOCK: "cloud-init", KUBESHIFT: "node-env"}
    assert built == {STOCK: "node-env"}
    assert parse_images(images_argument(kops)) == kops
    assert parse_images(images_argument(modules)) == {SEED_IMAGE: "join"}
    with pytest.raises(ValueError, match="boot 'kubelet'"):
        parse_images(f"{STOCK}=kubelet")

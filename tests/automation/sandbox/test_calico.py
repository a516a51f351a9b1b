"""The live cluster's Calico IP pool, seeded on a real apiserver."""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client

from automation.kube.calico import GROUP, PLURAL, VERSION, set_ipip_mode
from automation.kube.clients import KubeClients
from automation.sandbox.calico import seed_ip_pool


@pytest.mark.controlplane
def test_the_pool_starts_on_ipip_and_a_second_seed_leaves_a_switched_pool_alone(
    kube: KubeClients,
) -> None:
    custom = client.CustomObjectsApi(kube.api_client)
    name = f"pool-{uuid.uuid4().hex[:6]}"
    try:
        seed_ip_pool(kube, name, "100.64.0.0/16")
        pool = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        assert pool["spec"]["cidr"] == "100.64.0.0/16"
        assert pool["spec"]["ipipMode"] == "Always"

        assert set_ipip_mode(custom, name, "Never").changed  # what native-routing does
        seed_ip_pool(kube, name, "100.64.0.0/16")  # `sandbox up` again, mid-migration
        pool = custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)
        assert pool["spec"]["ipipMode"] == "Never"
    finally:
        custom.delete_cluster_custom_object(GROUP, VERSION, PLURAL, name)

"""A ``names``, ``descriptions``, ``user_data``, ``kept_tags`` or ``kept_inputs`` key that
matches nothing is one sentence, not silence."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from automation.adoption.stack_file import propose_stack
from automation.adoption.unmatched import unmatched
from automation.aws.clients import AwsAccess, AwsClients
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import build
from components.contract.loading import load_stack_file
from tests.support.moto_fixtures import MotoServer

LOCAL = Path(__file__).resolve().parents[3] / "stacks" / "Pulumi.local.yaml"


def _values(names: dict[str, str], kept_tags: dict[str, Any]) -> dict[str, Any]:
    values = copy.deepcopy(load_stack_file(LOCAL))
    values["kubeshift:cluster"]["names"] = names
    values["kubeshift:cluster"]["kept_tags"] = kept_tags
    return values


def test_every_key_write_config_proposes_for_a_kops_cluster_matches(
    kops_values: dict[str, Any], moto: MotoServer, tmp_path: Path
) -> None:
    region = kops_values["aws:region"]
    build(kops_values, Aws(region, moto.endpoint_url))
    clients = AwsClients(AwsAccess(region=region))
    proposed = propose_stack(kops_values, tmp_path / "Pulumi.local.yaml", clients).values
    cluster = proposed["kubeshift:cluster"]
    assert cluster["names"] and cluster["kept_tags"] and cluster["user_data"]
    assert unmatched(proposed, "baseline") == []


def test_a_key_with_a_typo_is_named() -> None:
    values = _values(
        {"security-group:local-demo-nodes": "nodes.x", "local-demo-api": "api-x"},
        {"local-demo-source-network-vcp": {"a": "b"}},
    )
    assert unmatched(values, "baseline") == [
        "kubeshift:cluster.names 'security-group:local-demo-nodes' matches no resource "
        "kubeshift declares at baseline (`kubeshift render --json` lists their names).",
        "kubeshift:cluster.kept_tags 'local-demo-source-network-vcp' is no resource's "
        "logical name at baseline (`kubeshift render` lists them).",
    ]


def test_a_description_for_a_group_kubeshift_does_not_declare_is_named() -> None:
    values = _values({}, {})
    values["kubeshift:cluster"]["descriptions"] = {
        "local-demo-node": "Security group for nodes",
        "local-demo-nodes": "Security group for nodes",
    }
    assert unmatched(values, "baseline") == [
        "kubeshift:cluster.descriptions 'local-demo-nodes' is no security group kubeshift "
        "declares at baseline (`kubeshift render --json` lists their names)."
    ]


def test_a_boot_script_for_a_template_kubeshift_does_not_declare_is_named() -> None:
    values = _values({}, {})
    values["kubeshift:cluster"]["user_data"] = {
        "local-demo-workers-general-on-demand": "#!/bin/bash\n",
        "local-demo-workers-general": "#!/bin/bash\n",
    }
    assert unmatched(values, "baseline") == [
        "kubeshift:cluster.user_data 'local-demo-workers-general' is no launch template "
        "kubeshift declares at baseline (`kubeshift render --json` lists their names)."
    ]


def test_a_kept_value_for_a_resource_kubeshift_does_not_declare_is_named() -> None:
    values = _values({}, {})
    kept = {"live": 300, "declared": 30}
    values["kubeshift:cluster"]["kept_inputs"] = {
        "local-demo-api-tg-443": {"deregistrationDelay": kept},
        "local-demo-api-tg": {"deregistrationDelay": kept},
    }
    assert unmatched(values, "baseline") == [
        "kubeshift:cluster.kept_inputs 'local-demo-api-tg' is no resource's logical name at "
        "baseline (`kubeshift render` lists them)."
    ]

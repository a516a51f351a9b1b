"""docs/reference.md is the stack-file reference the models generate, and every setting
says what it means."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.config import reference
from components.contract.keys import KNOWN_KEYS, REGION_KEY

REPO = Path(__file__).resolve().parents[3]
STACKS = sorted((REPO / "stacks").glob("Pulumi.*.yaml"))


def test_every_setting_has_a_description() -> None:
    assert reference.undescribed() == [], (
        "give each of these a Field(description=...) saying what it means, then run "
        "scripts/reference"
    )


def test_the_reference_page_is_what_the_models_generate() -> None:
    page = REPO / reference.PAGE
    assert page.read_text() == reference.reference(STACKS), (
        f"{reference.PAGE} drifted from the models: run scripts/reference"
    )


def test_every_key_of_a_stack_file_has_a_row() -> None:
    keys = {row.key.split("`")[1] for rows in reference.rows(STACKS) for row in rows}
    assert {*KNOWN_KEYS, REGION_KEY} <= keys
    assert "kubeshift:cluster.worker_pools[].instance_types" in keys
    assert "kubeshift:cluster.kept_inputs.<resource>.<attribute>.live" in keys
    assert "kubeshift:runtime.clusters.<role>.kubeconfig" in keys
    assert "kubeshift:runtime.mirror.registry_rewrites[].source" in keys


def test_a_key_spelt_two_ways_shows_both() -> None:
    rows = {row.key.split("`")[1]: row for row in reference.rows(STACKS)[1]}
    assert "`delete-emptydir-data`" in rows["kubeshift:runtime.drain.delete_emptydir_data"].key


def test_examples_come_from_the_stack_files() -> None:
    found = reference.examples(STACKS)
    assert found["kubeshift:cluster.worker_pools[].group_per"] == "`capacity` (local)"
    assert found["kubeshift:runtime.etcd.ca_file"].endswith("(vpc-move-example)")
    assert "kubeshift:cluster.network" not in {
        row.key.split("`")[1] for row in reference.rows(STACKS)[0] if row.example
    }


def test_a_field_without_a_description_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from components.contract.cluster_models import DnsConfig

    monkeypatch.setattr(DnsConfig.model_fields["ttl"], "description", None)
    assert reference.undescribed() == ["kubeshift:cluster.dns.ttl"]

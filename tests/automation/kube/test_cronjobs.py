"""One runner per CronJob across the primary and the mirror, on two real control planes."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes.client import BatchV1Api

from automation.kube.clients import KubeClients
from automation.kube.copy.copying import copy_namespaces
from automation.kube.copy.options import CopyOptions
from automation.kube.cronjobs import SUSPENDED_BY, HandOver, hand_over, restore
from tests.support.workloads import PAUSE_IMAGE

pytestmark = pytest.mark.controlplane


def _cronjob(name: str, *, suspend: bool) -> dict[str, Any]:
    pod = {"restartPolicy": "Never", "containers": [{"name": "job", "image": PAUSE_IMAGE}]}
    return {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
        "spec": {"schedule": "0 0 1 1 *", "suspend": suspend,
                 "jobTemplate": {"spec": {"template": {"spec": pod}}}},
    }  # fmt: skip


def _seen(clients: KubeClients, namespace: str) -> dict[str, tuple[bool, bool]]:
    """name -> (suspended, marked by kubeshift)."""
    return {
        c.metadata.name: (bool(c.spec.suspend), SUSPENDED_BY in (c.metadata.annotations or {}))
        for c in BatchV1Api(clients.api_client).list_namespaced_cron_job(namespace).items
    }


def test_each_cronjob_runs_on_one_cluster_and_the_primary_ends_as_it_began(
    kube: KubeClients, mirror: KubeClients, namespace: str
) -> None:
    primary = kube
    batch = BatchV1Api(primary.api_client)
    batch.create_namespaced_cron_job(namespace, _cronjob("invoices", suspend=False))
    batch.create_namespaced_cron_job(namespace, _cronjob("exports", suspend=True))  # the user's
    before = _seen(primary, namespace)
    copy_namespaces(primary, mirror, CopyOptions(namespaces=(namespace,), kinds=("CronJob",)))
    assert _seen(mirror, namespace) == {"invoices": (True, True), "exports": (True, True)}

    to_mirror = hand_over("mirror", primary, mirror, [namespace])
    assert to_mirror.runs_on == {f"{namespace}/exports": "neither (suspended by the user)",
                                 f"{namespace}/invoices": "mirror"}  # fmt: skip
    assert _seen(primary, namespace) == {"invoices": (True, True), "exports": (True, False)}
    assert _seen(mirror, namespace)["invoices"] == (False, False)
    assert hand_over("mirror", primary, mirror, [namespace]).changed == []  # idempotent
    dry = hand_over("primary", primary, mirror, [namespace], dry_run=True)
    assert len(dry.changed) == 2 and _seen(primary, namespace)["invoices"] == (True, True)

    back = hand_over("primary", primary, mirror, [namespace])
    assert back.runs_on[f"{namespace}/invoices"] == "primary"
    assert _seen(primary, namespace) == before
    assert _seen(mirror, namespace)["invoices"] == (True, True)

    hand_over("mirror", primary, mirror, [namespace])  # a crash left it on the mirror:
    restored = restore(primary, [namespace])  # teardown puts the primary back
    assert restored.changed == [f"{namespace}/invoices resumed on primary"]
    assert _seen(primary, namespace) == before
    assert restore(primary, [namespace]).changed == []


def test_the_report_names_jobs_left_to_finish() -> None:
    report = HandOver(
        runs_on={"shop/a": "mirror", "shop/b": "neither (suspended by the user)"},
        changed=["shop/a suspended on primary", "shop/a resumed on mirror"],
        still_running=["shop/a (1 on primary)"],
    )
    assert report.message == (
        "2 CronJob(s): 1 on mirror, 1 on neither (suspended by the user); switched 2; "
        "Jobs still running, left to finish: shop/a (1 on primary)"
    )

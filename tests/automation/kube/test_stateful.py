"""Which workloads keep data in claims, and which Services serve them (pure)."""

from __future__ import annotations

from automation.kube.copy.kinds import KIND_BY_NAME
from automation.kube.stateful import StatefulWorkload, claims, refusal, served_by


def _pod_spec(*claim_names: str) -> dict:  # type: ignore[type-arg]
    volumes = [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claim_names]
    return {"containers": [{"name": "c", "image": "i"}], "volumes": [*volumes, {"name": "tmp",
            "emptyDir": {}}]}  # fmt: skip


def test_claims_are_mounted_claims_and_claim_templates() -> None:
    deployment = {"spec": {"template": {"spec": _pod_spec("uploads")}}}
    assert claims("Deployment", deployment, KIND_BY_NAME["Deployment"].pod_spec) == ("uploads",)
    sts = {"spec": {"template": {"spec": _pod_spec()},
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}}  # fmt: skip
    assert claims("StatefulSet", sts, KIND_BY_NAME["StatefulSet"].pod_spec) == ("data",)
    cron = {"spec": {"jobTemplate": {"spec": {"template": {"spec": _pod_spec("a", "a")}}}}}
    assert claims("CronJob", cron, KIND_BY_NAME["CronJob"].pod_spec) == ("a",)
    assert claims("Deployment", {"spec": {"template": {"spec": _pod_spec()}}},
                  KIND_BY_NAME["Deployment"].pod_spec) == ()  # fmt: skip


def test_services_selecting_a_left_workloads_pods_are_found() -> None:
    db = StatefulWorkload("StatefulSet", "shop", "db", ("data",), {"app": "db", "tier": "x"})

    def svc(ns: str, name: str, selector: dict[str, str] | None) -> dict:  # type: ignore[type-arg]
        return {"metadata": {"namespace": ns, "name": name}, "spec": {"selector": selector}}

    services = [svc("shop", "db", {"app": "db"}), svc("shop", "web", {"app": "web"}),
                svc("other", "db", {"app": "db"}), svc("shop", "external", None)]  # fmt: skip
    assert served_by([db], services) == {"shop/db"}
    sentence = refusal([db])
    assert sentence.startswith("1 workload(s) keep data")
    assert "StatefulSet shop/db (data)" in sentence

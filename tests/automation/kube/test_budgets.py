"""The budget tracker's matching and eviction tokens, fed a fixed list of PDBs."""

from __future__ import annotations

from typing import Any

from automation.kube.drain.budgets import BudgetTracker, describe_pdb, observed


def pdb(
    name: str, allowed: int, *, observed_gen: int | None = 1, min_available: int | None = 2
) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}}
    if min_available is not None:
        spec["minAvailable"] = min_available
    else:
        spec["maxUnavailable"] = 1
    status: dict[str, Any] = {
        "disruptionsAllowed": allowed,
        "currentHealthy": 3,
        "desiredHealthy": 2,
    }
    if observed_gen is not None:
        status["observedGeneration"] = observed_gen
    return {
        "metadata": {"name": name, "namespace": "ns", "generation": 1},
        "spec": spec,
        "status": status,
    }


def tracker(*pdbs: dict[str, Any]) -> BudgetTracker:
    t = BudgetTracker(policy=None)  # type: ignore[arg-type]
    t.load(list(pdbs))
    return t


def test_budgets_for_matches_namespace_and_selector() -> None:
    t = tracker(pdb("web", 1), pdb("db", 1))
    assert t.budgets_for("ns", {"app": "web"}) == ["ns/web"]
    assert t.budgets_for("other", {"app": "web"}) == []
    assert t.budgets_for("ns", {"app": "cache"}) == []


def test_tokens_follow_disruptions_allowed() -> None:
    t = tracker(pdb("web", 2))
    assert t.try_claim(["ns/web"]) is True
    assert t.try_claim(["ns/web"]) is True
    assert t.try_claim(["ns/web"]) is False
    t.release(["ns/web"])
    assert t.try_claim(["ns/web"]) is True


def test_status_update_resets_tokens() -> None:
    t = tracker(pdb("web", 0))
    assert t.try_claim(["ns/web"]) is False
    t._event("MODIFIED", pdb("web", 1))
    assert t.try_claim(["ns/web"]) is True
    t._event("DELETED", pdb("web", 1))
    assert t.try_claim(["ns/web"]) is None


def test_unknown_or_unobserved_budget_is_none() -> None:
    t = tracker(pdb("web", 5, observed_gen=None))
    assert not observed(pdb("web", 5, observed_gen=None))
    assert t.try_claim(["ns/web"]) is None
    assert t.try_claim(["ns/missing"]) is None
    assert t.try_claim([]) is None


def test_all_budgets_must_allow() -> None:
    t = tracker(pdb("a", 1), pdb("b", 0))
    assert t.try_claim(["ns/a", "ns/b"]) is False
    assert t.try_claim(["ns/a"]) is True  # the failed claim took nothing


def test_describe_names_rule_and_counts() -> None:
    assert describe_pdb(pdb("web", 0)) == (
        "ns/web (minAvailable 2; currentHealthy 3, desiredHealthy 2, disruptionsAllowed 0)"
    )
    assert "maxUnavailable 1" in describe_pdb(pdb("web", 0, min_available=None))
    assert tracker().describe("ns/gone") == "ns/gone"


def test_follows_only_known_observed_budgets() -> None:
    t = tracker(pdb("web", 0), pdb("new", 0, observed_gen=None))
    assert t.follows(["ns/web"])
    assert not t.follows(["ns/new"])
    assert not t.follows(["ns/web", "ns/missing"])
    assert not t.follows([])


def test_quiet_for_measures_time_since_last_update() -> None:
    now = [100.0]
    t = BudgetTracker(policy=None, clock=lambda: now[0])  # type: ignore[arg-type]
    t.load([pdb("web", 0), pdb("db", 0)])
    now[0] = 130.0
    t._event("MODIFIED", pdb("web", 1))
    now[0] = 135.0
    assert t.quiet_for(["ns/web"]) == 5.0
    assert t.quiet_for(["ns/web", "ns/db"]) == 35.0
    assert t.quiet_for([]) == 0.0

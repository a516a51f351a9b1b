"""``benchmarks/adoption.py``: its smoke run (moto in its own process, the local stack's
kops world) makes every check, and each check fails on what it must catch."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from benchmarks.adoption import Adopted, checks
from tests.benchmarks.smoke import checks_printed, report, run_smoke

CHECKS = [
    "the proposal has no problem",
    "discovery has no problem",
    "every declared resource mapped",
]


def test_the_smoke_run_makes_every_check(tmp_path: Path) -> None:
    done = run_smoke("adoption.py", tmp_path)
    assert done.returncode == 0, report(done)
    assert checks_printed(done) == dict.fromkeys(CHECKS, True), report(done)


def test_the_smoke_run_of_the_terraform_modules_world_makes_every_check(tmp_path: Path) -> None:
    done = run_smoke("adoption.py", tmp_path, "--built-by", "terraform-modules")
    assert done.returncode == 0, report(done)
    assert "built as terraform-modules would" in done.stdout, report(done)
    assert checks_printed(done) == dict.fromkeys(CHECKS, True), report(done)


def _failed(adopted: Adopted) -> list[str]:
    return [name for name, ok in checks(adopted).items() if not ok]


def test_each_check_fails_on_what_it_must_catch() -> None:
    whole = Adopted([], [], mapped=72, declared=72, unmodelled=19, kops_own=23)
    assert _failed(whole) == []
    assert _failed(replace(whole, proposal_problems=["no name for the VPC"])) == [CHECKS[0]]
    assert _failed(replace(whole, discovery_problems=["nodes: claimed twice"])) == [CHECKS[1]]
    assert _failed(replace(whole, mapped=71)) == [CHECKS[2]]  # one would be created anew
    assert _failed(replace(whole, mapped=0, declared=0)) == [CHECKS[2]]
    # what adoption adds (an ingress load balancer kops never built) counts as mapped
    assert _failed(replace(whole, mapped=51, added=21)) == []
    assert _failed(replace(whole, mapped=51, added=20)) == [CHECKS[2]]

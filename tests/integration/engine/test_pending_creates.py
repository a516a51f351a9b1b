"""The real engine killed while a create it had made was still returning: ``recover``
takes the made resource into the state by its live id (``pulumi refresh
--import-pending-creates``), and the next update does not make it again."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from automation.engine.adapter import PulumiEngine
from automation.run.journal import Journal
from automation.session.recovery import recover_engine
from tests.support.engine_fixtures import EngineProject, kill_tree

pytestmark = pytest.mark.engine


def _pending_creates(project: EngineProject) -> list[str]:
    deployment = json.loads(project.pulumi("stack", "export").stdout)["deployment"]
    return [
        op["resource"]["urn"].rsplit("::", 1)[-1]
        for op in deployment.get("pending_operations") or []
        if op.get("type") == "creating"
    ]


def _made(project: EngineProject, name: str) -> str | None:
    """The id of the record ``name`` if its create has made it (the "cloud" lookup)."""
    return next((p.stem for p in project.store.glob(f"{name}-*.json")), None)


def test_a_create_that_completed_as_the_engine_died_is_taken_not_made_again(
    engine_project: EngineProject, tmp_path: Path
) -> None:
    engine_project.pulumi("config", "set", "kubeshift-test:fleet_delay", "0")
    engine_project.pulumi("config", "set", "kubeshift-test:fleet_linger", "600")
    engine_project.pulumi("config", "set", "kubeshift:phase", "fleet")
    up = subprocess.Popen(
        [str(engine_project.engine.pulumi), "up", "--yes", "--skip-preview",
         "--stack", engine_project.stack, "--non-interactive"],
        cwd=engine_project.dir, env=engine_project.env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        # the first fleet group is made and its create still returning (600 s): the
        # groups are chained, so it is the only create in flight
        while not (_made(engine_project, "fleet-group-0") and up.poll() is None):
            assert time.monotonic() < deadline, "the first fleet group was never made"
            time.sleep(0.2)
        while "fleet-group-0" not in _pending_creates(engine_project):
            assert time.monotonic() < deadline, "the create was never pending in the state"
            time.sleep(0.2)
    finally:
        killed = kill_tree(up.pid)
        up.wait(timeout=60)
    # the plugins died with the engine: a dynamic provider left serving would outlive
    # every later test
    assert len(killed) > 1, killed
    gone_by = time.monotonic() + 60
    while left := [pid for pid in killed if _running(pid)]:
        assert time.monotonic() < gone_by, f"still running after SIGKILL: {left}"
        time.sleep(0.1)
    made = _made(engine_project, "fleet-group-0")
    engine_project.pulumi("config", "set", "kubeshift-test:fleet_linger", "0")
    engine = PulumiEngine(engine_project.dir, engine_project.stack, on_output=print)

    recovery = recover_engine(
        engine, Journal(tmp_path / "journal.json", engine_project.stack), engine_project.stack,
        confirm=lambda _q: True, find_live=lambda create: _made(engine_project, create.name),
    )  # fmt: skip

    urn = next(iter(recovery.taken))
    assert recovery.taken == {urn: made} and urn.endswith("::fleet-group-0")
    assert recovery.stale_locks, "the killed engine's lock was removed"
    assert _pending_creates(engine_project) == [] and recovery.pending_creates == []
    state = json.loads(engine_project.pulumi("stack", "export").stdout)["deployment"]
    assert {r["urn"]: r.get("id") for r in state["resources"]}.get(urn) == made, recovery
    outcome = engine.up()
    assert outcome.summary.get("create") == 4, outcome.summary  # groups 1-4, not group 0
    records = sorted(p.stem for p in engine_project.store.glob("fleet-group-*.json"))
    assert len(records) == 5 and made in records


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waits only for its parent to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"

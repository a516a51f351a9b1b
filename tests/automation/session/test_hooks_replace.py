"""``kubeshift replace-nodes``: refused in one sentence before anything is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.config.clients import StaticClients
from automation.core.errors import UserError
from automation.session.hooks import ReplaceRequest, execute_replacement
from tests.automation.fakes import FakeEngine

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def replace(engine: FakeEngine, phase: str, *nodes: str, yes: bool = False) -> None:
    request = ReplaceRequest(REPO, "cni-swap-example", phase, nodes, yes=yes)
    execute_replacement(request, engine_factory=lambda *_: engine, clients=StaticClients())


@pytest.mark.parametrize(
    ("phase", "nodes", "says"),
    [
        ("cni-swap", (), "Name the nodes to replace"),
        ("roll", ("ip-10-0-0-1",), "Unknown phase 'roll'"),
        ("cni-swap", ("ip-10-0-0-1",), "is destructive and there is no terminal"),
    ],
)
def test_refused_before_the_journal_or_the_cloud_is_touched(
    state: Path, phase: str, nodes: tuple[str, ...], says: str
) -> None:
    engine = FakeEngine()
    with pytest.raises(UserError, match=says) as caught:
        replace(engine, phase, *nodes)
    assert "\n" not in str(caught.value)
    assert [name for name, _ in engine.calls if name in {"up", "record"}] == []
    assert not (state / "cni-swap-example.journal.json").exists()

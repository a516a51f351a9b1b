"""Secret config values: found from the engine's decryption, kept out of journals and output."""

from __future__ import annotations

import json
from pathlib import Path

from automation.core.secrets import secret_strings
from automation.model.phase import CREATES_ONLY, Hook, HookResult, Phase
from automation.run.journal import Journal
from automation.run.runner import Runner
from tests.automation.fakes import FakeEngine
from tests.automation.run.test_runner import make_context

TOKEN = "s3cr3t-registry-token"


def test_only_the_leaves_the_stack_file_marks_secure_are_secrets() -> None:
    raw = {
        "kubeshift:cluster": {"name": "prod", "tags": {"token": {"secure": "v1:abc"}}},
        "kubeshift:password": {"secure": "v1:def"},
        "kubeshift:phase": "baseline",
    }
    decrypted = {
        "kubeshift:cluster": json.dumps({"name": "prod", "tags": {"token": TOKEN}}),
        "kubeshift:password": "hunter2-hunter2",
    }

    assert secret_strings(raw, decrypted) == [TOKEN, "hunter2-hunter2"]


def test_a_hook_that_prints_a_secret_leaves_it_in_neither_journal_nor_report(
    tmp_path: Path,
) -> None:
    def leaky(_ctx: object) -> HookResult:
        return HookResult(changed=True, message=f"logged in with {TOKEN}")

    phase = Phase(
        id="network",
        summary="network",
        after=(Hook(name="login", summary="log in", run=leaky),),
        changes=CREATES_ONLY,
    )
    path = tmp_path / "s.journal.json"
    runner = Runner(FakeEngine(), Journal(path, "s", [TOKEN]), make_context, confirm=None)

    report = runner.run((phase,))

    assert TOKEN not in path.read_text()
    assert all(TOKEN not in outcome.message for outcome in report.outcomes)
    assert any("[secret]" in outcome.message for outcome in report.outcomes)

"""``benchmarks/state_backend.py``: its smoke run makes every check, and each check
fails on a store that breaks what it checks."""

from __future__ import annotations

from pathlib import Path

from automation.core.documents import FileDocument
from benchmarks.state_backend import _journal_steps, _racing_writers, _renewals
from tests.benchmarks.smoke import checks_printed, report, run_smoke

CHECKS = [
    "every journalled step reads back finished, on both backends",
    "the renewed lock reads back this run's, then none once released",
    "two writers racing on the S3 journal both find their steps",
]


def test_the_smoke_run_makes_every_check(tmp_path: Path) -> None:
    done = run_smoke("state_backend.py", tmp_path)
    assert done.returncode == 0, report(done)
    assert checks_printed(done) == dict.fromkeys(CHECKS, True), report(done)


class _Forgetful(FileDocument):
    """Answers every write and keeps none after the first."""

    def replace(self, body: bytes, expected: str | None) -> str:
        if self.read() is None:
            return super().replace(body, expected)
        return "never-kept"


class _KeepsAfterRelease(FileDocument):
    def delete(self, expected: str) -> None:
        pass


def test_each_check_fails_on_a_store_that_breaks_it(tmp_path: Path) -> None:
    assert _journal_steps(FileDocument(tmp_path / "ok.json"), 3)[1]
    assert not _journal_steps(_Forgetful(tmp_path / "forgets.json"), 3)[1]
    assert _renewals(FileDocument(tmp_path / "lock.json"), 3)[1]
    assert not _renewals(_KeepsAfterRelease(tmp_path / "kept.json"), 3)[1]
    assert _racing_writers(lambda: FileDocument(tmp_path / "race.json"))
    assert not _racing_writers(lambda: _Forgetful(tmp_path / "race-forgets.json"))

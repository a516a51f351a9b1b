"""Tests that start a binary wait for its build; the build's end without it fails them;
scripts/test-pipeline's exit status lets no shard's failure, nor an empty shard, pass."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from types import ModuleType

import pytest

from automation.sandbox.binaries import component_dir
from tests.support import testbin_wait
from tests.support.scripts import load_script

REPO = Path(__file__).resolve().parents[3]


def _finish(component: str) -> None:
    """What scripts/testbin leaves once a component is built: its stamped directory."""
    target = component_dir(component)
    target.mkdir(parents=True)
    (target / ".testbin.json").write_text(json.dumps({"component": component}))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUBESHIFT_TESTBIN_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(testbin_wait, "POLL_SECONDS", 0.01)
    build = tmp_path / "build"
    build.mkdir()
    (build / "build.log").write_text("go: compiling\ngo: something broke\n")
    return build


def test_a_test_waits_until_its_components_are_built(cache: Path) -> None:
    _finish("etcd")
    finishing = threading.Event()

    def finish_the_rest() -> None:
        finishing.set()
        for component in ("kubernetes", "kwok"):
            _finish(component)

    later = threading.Timer(0.3, finish_the_rest)
    later.start()

    why = testbin_wait.wait_for({"etcd", "kubernetes", "kwok"}, cache)
    waited_for_them = finishing.is_set()

    later.join()
    assert why is None
    assert waited_for_them  # it returned only once the rest had begun to appear


def test_the_build_ending_without_a_component_fails_with_its_log(cache: Path) -> None:
    _finish("etcd")
    (cache / "exit").write_text("1\n")

    why = testbin_wait.wait_for({"etcd", "kubernetes"}, cache)

    assert why is not None
    assert "exit 1" in why and "kubernetes" in why and "something broke" in why
    assert "etcd" not in why.split(";")[0]


def test_the_wait_has_a_deadline(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testbin_wait, "DEADLINE_SECONDS", 0.05)

    why = testbin_wait.wait_for({"kwok"}, cache)

    assert why is not None and "kwok not built" in why


def _pipeline() -> ModuleType:
    return load_script("test-pipeline")


@pytest.mark.parametrize(
    ("codes", "sharded", "expected"),
    [
        ((0, 0, 0), True, 0),
        ((0, 1, 0), True, 1),
        ((0, 5, 0), True, 5),  # a shard that ran no test fails CI
        ((5,), False, 5),  # a single pytest's exit 5 passes through
        ((0, 2, 5), True, 2),
    ],
)
def test_the_pipeline_passes_only_when_every_shard_ran_and_passed(
    codes: tuple[int, ...], sharded: bool, expected: int
) -> None:
    pipeline = _pipeline()
    runs = [
        pipeline.Running(pipeline.Job(f"s{n}", []), Path("log"), None, 0.0, code=code)
        for n, code in enumerate(codes)
    ]

    assert pipeline.combined_code(runs, sharded) == expected


MARKERS_PLUGIN = """
import json, os

def pytest_collection_finish(session):
    items = {i.nodeid: sorted({m.name for m in i.iter_markers()}) for i in session.items}
    with open(os.environ["MARKERS_OUT"], "w") as out:
        json.dump(items, out)
"""


def test_every_test_lands_in_exactly_one_shard(tmp_path: Path) -> None:
    """The shards' marker expressions split the whole suite: none twice, none left out,
    no shard empty."""
    from _pytest.mark.expression import Expression

    (tmp_path / "markers_out.py").write_text(MARKERS_PLUGIN)
    out = tmp_path / "markers.json"
    pipeline = _pipeline()
    shards = pipeline.shards(tmp_path, [])
    subprocess.run(
        [shards[0].argv[0], "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "markers_out"],
        cwd=REPO, capture_output=True, check=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "MARKERS_OUT": str(out)},
    )  # fmt: skip
    markers: dict[str, list[str]] = json.loads(out.read_text())
    assert len(markers) > 1000
    landed: dict[str, list[str]] = {nodeid: [] for nodeid in markers}
    for job in shards:
        expression = Expression.compile(job.argv[job.argv.index("-m") + 1])
        chosen = [n for n, names in markers.items() if expression.evaluate(names.__contains__)]
        assert chosen, f"shard {job.name} selects no test"
        for nodeid in chosen:
            landed[nodeid].append(job.name)

    assert {n: s for n, s in landed.items() if len(s) != 1} == {}

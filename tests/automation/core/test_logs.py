"""The engine's output: kept in a file per command, on the console with ``--verbose``."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from automation.core import logs


@pytest.fixture(autouse=True)
def _restored_logger() -> Iterator[None]:
    """configure() rewires the process-wide logger: give it back as it was."""
    logger = logging.getLogger(logs.LOGGER)
    saved = (list(logger.handlers), logger.propagate, logger.level)
    yield
    logger.handlers[:], logger.propagate, logger.level = saved[0], saved[1], saved[2]


@pytest.mark.parametrize("verbose", [False, True])
def test_the_engine_output_is_kept_in_its_file_and_shown_with_verbose_only(
    verbose: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    logs.configure(verbose=verbose, json_lines=True)
    sink = logs.EngineLog(tmp_path / "logs" / "local.run-1.engine.log")
    sink.announce()
    sink("Previewing update (dev):")
    sink("   ")  # blank lines are dropped
    sink("    ~ aws:ec2/vpc:Vpc local-demo-vpc update\n")
    kept = ["Previewing update (dev):", "    ~ aws:ec2/vpc:Vpc local-demo-vpc update"]
    assert sink.path.read_text().splitlines() == kept
    shown = [json.loads(line)["message"] for line in stderr.getvalue().splitlines()]
    where = f"the engine's output: {sink.path} (-v shows it here)"
    assert shown == [where, *(kept if verbose else [])]


@pytest.mark.parametrize("verbose", [False, True])
def test_engine_detail_is_shown_with_verbose_only(
    verbose: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    logs.configure(verbose=verbose, json_lines=True)
    logs.engine_detail("    ~ aws:ec2/vpc:Vpc local-demo-vpc import")
    shown = [json.loads(line)["message"] for line in stderr.getvalue().splitlines()]
    assert shown == (["    ~ aws:ec2/vpc:Vpc local-demo-vpc import"] if verbose else [])

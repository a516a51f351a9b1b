"""The engine's output: streamed for a phase, kept for ``--verbose`` where a command
reports it in its own words."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

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
def test_engine_detail_is_shown_with_verbose_only_and_engine_output_always(
    verbose: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)
    logs.configure(verbose=verbose, json_lines=True)
    logs.engine_output("Previewing update (dev):")
    logs.engine_detail("    ~ aws:ec2/vpc:Vpc local-demo-vpc import")
    logs.engine_output("   ")  # blank lines are dropped
    shown = [json.loads(line)["message"] for line in stderr.getvalue().splitlines()]
    expected = ["Previewing update (dev):"]
    if verbose:
        expected.append("    ~ aws:ec2/vpc:Vpc local-demo-vpc import")
    assert shown == expected

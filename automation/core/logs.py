"""One configured logger for kubeshift: rich on a terminal, JSON lines for CI.

Lifecycle phrases are fixed ("started", "succeeded", "will retry in Ns", "failed")
so logs read the same across phases; Pulumi's own output goes to a file per command
(:class:`EngineLog`) and to the ``kubeshift.engine`` logger at debug level.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

LOGGER = "kubeshift"


EVENT_FIELDS = ("event", "phase", "step", "seconds", "pending", "remaining")
"""What a line may carry besides its message, for a CI log or a bot to follow a run:
``event`` is step-started/-succeeded/-failed/-skipped/-stopped, waiting or waited."""


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        payload.update({k: record.__dict__[k] for k in EVENT_FIELDS if k in record.__dict__})
        return json.dumps(payload)


def configure(*, verbose: bool = False, json_lines: bool = False, console: Any = None) -> None:
    """Configure the ``kubeshift`` logger once per process (idempotent)."""
    logger = logging.getLogger(LOGGER)
    logger.handlers.clear()
    logger.propagate = False
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    handler: logging.Handler
    if json_lines:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(JsonFormatter())
    else:
        from rich.logging import RichHandler

        handler = RichHandler(console=console, show_path=False, markup=False)
    logger.addHandler(handler)


class EngineLog:
    """The engine's whole output for one command, kept in a file and shown on the console
    with ``--verbose`` only: a run's previews, resource by resource, are thousands of
    lines that the steps' own lines summarise."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, line: str) -> None:
        line = line.rstrip("\n")
        if not line.strip():
            return
        with self.path.open("a", encoding="utf-8") as file:  # each line kept, even on a kill
            file.write(line + "\n")
        logging.getLogger(f"{LOGGER}.engine").debug(line)

    def announce(self) -> None:
        """Say where the output goes, once, before the engine writes any."""
        logging.getLogger(LOGGER).info("the engine's output: %s (-v shows it here)", self.path)


def engine_detail(line: str) -> None:
    """Sink for engine output that a command reports in its own words (``adopt``'s
    table and differences): shown with ``--verbose`` only."""
    if line.strip():
        logging.getLogger(f"{LOGGER}.engine").debug(line)

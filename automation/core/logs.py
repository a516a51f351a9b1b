"""One configured logger for kubeshift: rich on a terminal, JSON lines for CI.

Lifecycle phrases are fixed ("started", "succeeded", "will retry in Ns", "failed")
so logs read the same across phases; Pulumi's own output is fed through the
``kubeshift.engine`` logger rather than printed.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

LOGGER = "kubeshift"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "time": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
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


def engine_output(line: str) -> None:
    """Sink for the Pulumi engine's output lines."""
    if line.strip():
        logging.getLogger(f"{LOGGER}.engine").info(line)


def engine_detail(line: str) -> None:
    """Sink for engine output that a command reports in its own words (``adopt``'s
    table and differences): shown with ``--verbose`` only."""
    if line.strip():
        logging.getLogger(f"{LOGGER}.engine").debug(line)

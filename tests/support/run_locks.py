"""A run lock as another machine's kubeshift left it, written by a test."""

from __future__ import annotations

import json


def foreign_lock(operator: str, *, renewed: float, lease: float = 120.0, pid: int = 4242) -> bytes:
    """The lock of a run by ``operator`` (``user@host``) renewed at ``renewed``."""
    host = operator.split("@", 1)[1]
    holder = {
        "operator": operator, "host": host, "pid": pid, "process_start": None,
        "run_id": host[0] * 32, "since": renewed - 60, "renewed": renewed,
        "lease_seconds": lease,
    }  # fmt: skip
    return json.dumps(holder).encode()

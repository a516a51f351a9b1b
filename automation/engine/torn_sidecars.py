"""What a killed engine can leave in a ``file://`` backend: a checkpoint's empty sidecar.

Pulumi's DIY backend saves through go-cloud's fileblob, which writes a blob's ``.attrs``
sidecar by truncating it and then writing a few bytes of JSON. An engine killed between
the two leaves the sidecar empty, and from then on every read of the stack fails with
"failed to load checkpoint: EOF" — the torn read :func:`automation.core.errors.
torn_checkpoint_read` waits out when a live writer is to blame, but nothing will ever
finish this one. fileblob reads a missing sidecar as no attributes, so removing an empty
or unreadable one gives back the checkpoint as last saved. A live writer fills its
sidecar within microseconds, so only one unchanged for :data:`SETTLED` seconds is taken
for torn.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

SETTLED = 2.0
"""Seconds an empty sidecar must have stood unchanged to be a dead writer's."""


def backend_root(url: str | None) -> Path | None:
    """The directory of a ``file://`` backend URL (``~`` expanded); None for others."""
    if not url or not url.startswith("file://"):
        return None
    parsed = urlparse(url)
    return Path(unquote(parsed.netloc + parsed.path)).expanduser()


def _torn(sidecar: Path, now: float) -> bool:
    try:
        text = sidecar.read_text()
        settled = now - sidecar.stat().st_mtime >= SETTLED
    except OSError:
        return False
    try:
        json.loads(text)
    except ValueError:
        return settled
    return False


def _of_stack(relative: tuple[str, ...], project: str, stack: str) -> bool:
    """Whether the sidecar at ``relative`` (its path's parts under ``.pulumi``) is of the
    stack's checkpoint or its backup (``stacks/<project>/<stack>.json…``), its history
    or backups (``history|backups/<project>/<stack>/…``) or its lock
    (``locks/organization/<project>/<stack>/…``); or of the same in a backend laid out
    before projects (no ``<project>``, no ``organization``)."""
    if len(relative) < 2:
        return False  # the backend's own (meta.yaml)
    kind, *middle, name = relative
    ours = name.startswith(f"{stack}.")
    if kind == "stacks":
        return ours and middle in ([project], [])
    if kind in ("history", "backups"):
        return middle in ([project, stack], [stack])
    if kind == "locks":
        return middle in (["organization", project, stack], [stack])
    return False


def torn_sidecars(root: Path, project: str, stack: str, *, now: float | None = None) -> list[Path]:
    """The sidecars of ``project``'s stack under the backend ``root`` that a killed writer
    left torn."""
    state = root / ".pulumi"
    if not state.is_dir():
        return []
    at = time.time() if now is None else now
    return sorted(
        sidecar
        for sidecar in state.rglob("*.attrs")
        if _of_stack(sidecar.relative_to(state).parts, project, stack) and _torn(sidecar, at)
    )


def repair(url: str | None, project: str, stack: str) -> list[str]:
    """Remove the torn sidecars of ``project``'s stack in the ``file://`` backend at
    ``url``; the paths removed, relative to the backend."""
    root = backend_root(url)
    if root is None:
        return []
    removed = []
    for sidecar in torn_sidecars(root, project, stack):
        sidecar.unlink(missing_ok=True)
        removed.append(str(sidecar.relative_to(root)))
    return removed

"""Offline renders kept by everything that decides them, for ``render`` and ``diff``.

A render of the 72-ASG example takes seconds, most of it in the Pulumi SDK's own
serialization under the mocks, and a reviewer renders the same phases of the same
stack file again and again. A render is a function of the program's code
(``__main__.py`` and ``components/``), the installed Pulumi SDKs, the stack's config
and the phase, so the cache is keyed by a digest of all of them: any edit renders
anew. The program also reads a few variables the engine sets (an adoption's import
file, a run's record); with one of them set nothing is cached. Entries live under
``<state dir>/render-cache/``; one that cannot be read is rendered again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from automation.rendered import PROGRAM, RenderedResource
from components.engine_vars import PROGRAM_VARS

VERSION = 1
SDKS = ("pulumi", "pulumi-aws", "pulumi-kubernetes")
KEEP = 64
"""Entries kept; the oldest go first."""


def _sdk_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def program_digest(root: Path = PROGRAM.parent) -> str:
    """A digest of the program's code and the SDK versions it runs on."""
    digest = hashlib.sha256(f"v{VERSION}".encode())
    for path in sorted([root / "__main__.py", *(root / "components").rglob("*.py")]):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    for sdk in SDKS:
        digest.update(f"{sdk}={_sdk_version(sdk)}".encode())
    return digest.hexdigest()


def key(config: Mapping[str, Any], phase: str | None, program: str) -> str:
    body = json.dumps({"config": config, "phase": phase}, sort_keys=True, default=str)
    return hashlib.sha256(f"{program}\0{body}".encode()).hexdigest()


def _load(path: Path) -> list[RenderedResource] | None:
    try:
        rows = json.loads(path.read_text())
        return [
            RenderedResource(**{**row, "aliases": tuple(row.get("aliases", ()))}) for row in rows
        ]
    except (OSError, ValueError, TypeError):
        return None


def _store(path: Path, resources: list[RenderedResource]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps([dataclasses.asdict(r) for r in resources]))
        partial.replace(path)
        entries = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for old in entries[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # a cache that cannot be written only costs the next render its time


def cached_render(
    config: Mapping[str, Any], phase: str | None, cache_dir: Path
) -> tuple[list[RenderedResource], bool]:
    """The resources the program declares for ``config`` at ``phase``, and whether they
    came from the cache."""
    from automation.render import render  # the Pulumi SDK, only when rendering
    from components import kept_file
    from components.config import CLUSTER_KEY

    if any(os.environ.get(name) for name in PROGRAM_VARS):
        return render(config, phase), False
    try:  # the kept file's content, not its name, is what the program reads
        keyed = kept_file.merge(config, CLUSTER_KEY)
    except kept_file.KeptFileError:
        return render(config, phase), False  # which refuses it in one sentence
    path = cache_dir / f"{key(keyed, phase, program_digest())}.json"
    found = _load(path) if path.exists() else None
    if found is not None:
        return found, True
    resources = render(config, phase)
    _store(path, resources)
    return resources, False

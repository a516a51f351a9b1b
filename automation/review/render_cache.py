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

from automation.review.rendered import PROGRAM, RenderedResource
from components.contract.engine_vars import PROGRAM_VARS

VERSION = 2  # 2: an entry holds the kept keys the program looked up
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


@dataclasses.dataclass(frozen=True)
class CachedRender:
    """A render's resources, the kept keys the program looked up, and whether it was
    read from the cache."""

    resources: list[RenderedResource]
    kept_looked_up: dict[str, list[str]]
    hit: bool
    path: Path | None = None
    """Where it is (or would be) cached; None when renders of this config are not."""


def _load(path: Path) -> CachedRender | None:
    try:
        entry = json.loads(path.read_text())
        resources = [
            RenderedResource(**{**row, "aliases": tuple(row.get("aliases", ()))})
            for row in entry["resources"]
        ]
        kept = {str(k): [str(v) for v in keys] for k, keys in entry["kept_looked_up"].items()}
        return CachedRender(resources, kept, hit=True, path=path)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def remember(render: CachedRender) -> None:
    """Cache ``render`` (made with ``store=False``) where it belongs."""
    if not render.hit and render.path is not None:
        _store(render.path, render)


def _store(path: Path, render: CachedRender) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        entry = {
            "resources": [dataclasses.asdict(r) for r in render.resources],
            "kept_looked_up": render.kept_looked_up,
        }
        partial.write_text(json.dumps(entry))
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
    rendered = cached_rendering(config, phase, cache_dir)
    return rendered.resources, rendered.hit


def cached_rendering(
    config: Mapping[str, Any], phase: str | None, cache_dir: Path, *, store: bool = True
) -> CachedRender:
    """The render of ``config`` at ``phase``, from the cache when an entry fits; a fresh
    one is cached unless ``store`` is False (then :func:`remember` may cache it later)."""
    from automation.review.render import render_program  # the Pulumi SDK, only when rendering
    from components.contract import kept_file
    from components.contract.keys import CLUSTER_KEY, PHASE_KEY

    def fresh(path: Path | None) -> CachedRender:
        rendering = render_program(config, phase)
        return CachedRender(rendering.resources, rendering.kept_looked_up, False, path)

    if any(os.environ.get(name) for name in PROGRAM_VARS):
        return fresh(None)
    try:  # the kept file's content, not its name, is what the program reads
        keyed = kept_file.merge(config, CLUSTER_KEY)
    except kept_file.KeptFileError:
        return fresh(None)  # which refuses it in one sentence
    if phase is not None:  # the phase rendered, not the one the stack file is at
        keyed = {k: v for k, v in keyed.items() if k != PHASE_KEY}
    path = cache_dir / f"{key(keyed, phase, program_digest())}.json"
    found = _load(path) if path.exists() else None
    if found is not None:
        return found
    rendered = fresh(path)
    if store:
        remember(rendered)
    return rendered

"""Locate the Pulumi engine (CLI + Python language host) the engine tests drive.

Why this exists: the tests must run against a real ``pulumi`` CLI, which machines here
build from Go modules (``scripts/build-pulumi``) while a user may already have a normal
Pulumi install. One lookup, in this order, serves both:

1. ``$KUBESHIFT_PULUMI_BIN_DIR`` — a directory holding ``pulumi`` (an explicit choice);
2. the cache ``scripts/build-pulumi`` fills:
   ``${KUBESHIFT_TESTBIN_DIR:-~/.cache/kubeshift/testbin}/pulumi-<version>/bin``,
   with ``<version>`` read from ``tools/go/pulumi/go.mod``;
3. ``pulumi`` on ``PATH``.

A missing engine raises :class:`MissingEngine` whose message says how to build it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WRAPPER_GOMOD = REPO / "tools" / "go" / "pulumi" / "go.mod"
CLI_MODULE = "github.com/pulumi/pulumi/pkg/v3"
BUILD_HINT = (
    "run `scripts/build-pulumi` (builds the pulumi CLI and Python language host from Go "
    "modules into the cache), or point KUBESHIFT_PULUMI_BIN_DIR at a Pulumi install's bin directory"
)


class MissingEngine(RuntimeError):
    """Raised when no usable ``pulumi`` CLI can be found."""


@dataclass(frozen=True)
class Engine:
    """Where the engine is and which version it reports."""

    bin_dir: Path
    pulumi: Path
    version: str
    source: str  # "KUBESHIFT_PULUMI_BIN_DIR", "cache" or "PATH"

    def env_path(self, path: str | None = None) -> str:
        """A PATH value with this engine's directory first."""
        rest = os.environ.get("PATH", "") if path is None else path
        return os.pathsep.join([str(self.bin_dir), rest]) if rest else str(self.bin_dir)


def cache_root() -> Path:
    """``$KUBESHIFT_TESTBIN_DIR`` or ``~/.cache/kubeshift/testbin``."""
    env = os.environ.get("KUBESHIFT_TESTBIN_DIR")
    return Path(env) if env else Path.home() / ".cache" / "kubeshift" / "testbin"


def pinned_version() -> str:
    """The Pulumi version the wrapper module pins, e.g. ``v3.259.0``."""
    match = re.search(
        rf"^\s*(?:require\s+)?{re.escape(CLI_MODULE)}\s+(v\S+)", WRAPPER_GOMOD.read_text(), re.M
    )
    if not match:
        raise MissingEngine(f"{WRAPPER_GOMOD} does not require {CLI_MODULE}.")
    return match.group(1)


def cache_bin_dir() -> Path:
    """The directory ``scripts/build-pulumi`` builds into."""
    return cache_root() / f"pulumi-{pinned_version()}" / "bin"


def _version_of(pulumi: Path) -> str:
    try:
        out = subprocess.run(
            [str(pulumi), "version"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PULUMI_SKIP_UPDATE_CHECK": "true"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MissingEngine(f"{pulumi} does not run ({exc}); {BUILD_HINT}.") from exc
    if out.returncode != 0:
        raise MissingEngine(f"`{pulumi} version` failed: {out.stderr.strip()}; {BUILD_HINT}.")
    return out.stdout.strip()


def _from_dir(bin_dir: Path, source: str) -> Engine:
    pulumi = bin_dir / "pulumi"
    if not os.access(pulumi, os.X_OK):
        raise MissingEngine(f"{source}: no executable pulumi in {bin_dir}; {BUILD_HINT}.")
    return Engine(bin_dir=bin_dir, pulumi=pulumi, version=_version_of(pulumi), source=source)


def find_engine() -> Engine:
    """Find the engine by override variable, then build cache, then ``PATH``."""
    override = os.environ.get("KUBESHIFT_PULUMI_BIN_DIR")
    if override:
        return _from_dir(Path(override), "KUBESHIFT_PULUMI_BIN_DIR")
    cached = cache_bin_dir()
    if (cached / "pulumi").exists():
        return _from_dir(cached, "cache")
    on_path = shutil.which("pulumi")
    if on_path:
        return _from_dir(Path(on_path).resolve().parent, "PATH")
    raise MissingEngine(f"no pulumi CLI in {cached} nor on PATH; {BUILD_HINT}.")

"""Locate the control-plane binaries built by ``scripts/testbin``.

The versions are read from the wrapper modules in ``tools/go/<component>/go.mod`` so the
build script and the tests can never disagree about which cache directory to use.
Binaries in ``KUBEBUILDER_ASSETS`` (the envtest convention) take precedence.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD_HINT = "run `scripts/testbin` (builds them from Go modules into the cache)"

_PINS = {
    "kubernetes": "k8s.io/kubernetes",
    "etcd": "go.etcd.io/etcd/server/v3",
    "kwok": "sigs.k8s.io/kwok",
}
_BINARIES = {
    "etcd": "etcd",
    "kube-apiserver": "kubernetes",
    "kube-controller-manager": "kubernetes",
    "kube-scheduler": "kubernetes",
    "kwok": "kwok",
}


class MissingBinaries(RuntimeError):
    """Raised when a binary the control plane needs is not built yet."""


@dataclass(frozen=True)
class Binaries:
    """Absolute paths of every executable the control-plane fixtures start."""

    etcd: Path
    kube_apiserver: Path
    kube_controller_manager: Path
    kube_scheduler: Path
    kwok: Path
    kwok_stages: Path
    versions: dict[str, str]


def cache_root() -> Path:
    """``$KUBESHIFT_TESTBIN_DIR`` or ``~/.cache/kubeshift/testbin``."""
    env = os.environ.get("KUBESHIFT_TESTBIN_DIR")
    return Path(env) if env else Path.home() / ".cache" / "kubeshift" / "testbin"


def pinned_version(component: str) -> str:
    """The version a wrapper module pins, e.g. ``v1.36.3`` for ``kubernetes``."""
    gomod = REPO / "tools" / "go" / component / "go.mod"
    module = re.escape(_PINS[component])
    match = re.search(rf"^\s*(?:require\s+)?{module}\s+(v\S+)", gomod.read_text(), re.M)
    if not match:
        raise MissingBinaries(f"{gomod} does not pin {_PINS[component]}")
    return match.group(1)


def component_dir(component: str) -> Path:
    return cache_root() / f"{component}-{pinned_version(component)}"


def _find(binary: str) -> Path | None:
    assets = os.environ.get("KUBEBUILDER_ASSETS")
    candidates = [Path(assets) / binary] if assets else []
    candidates.append(component_dir(_BINARIES[binary]) / binary)
    return next((c for c in candidates if c.is_file() and os.access(c, os.X_OK)), None)


def locate() -> Binaries:
    """Every binary, or :class:`MissingBinaries` naming what is absent and how to build it."""
    found = {name: _find(name) for name in _BINARIES}
    stages = component_dir("kwok") / "stages"
    missing = sorted(name for name, path in found.items() if path is None)
    if not stages.is_dir():
        missing.append(f"kwok stages ({stages})")
    if missing:
        raise MissingBinaries(
            f"control-plane binaries missing from {cache_root()}: {', '.join(missing)}; "
            f"{BUILD_HINT}"
        )
    paths = {name.replace("-", "_"): path for name, path in found.items()}
    return Binaries(
        **paths,  # type: ignore[arg-type]
        kwok_stages=stages,
        versions={c: pinned_version(c) for c in _PINS},
    )

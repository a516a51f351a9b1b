"""Missing binaries fail with a message that says how to build them."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.sandbox.binaries import MissingBinaries, locate, pinned_version
from automation.sandbox.kwok import STAGE_FILES


def test_missing_binaries_name_the_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBESHIFT_TESTBIN_DIR", str(tmp_path))
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)

    with pytest.raises(MissingBinaries) as excinfo:
        locate()

    message = str(excinfo.value)
    assert "scripts/testbin" in message
    assert "kube-apiserver" in message and "etcd" in message and "kwok" in message


def _fake_cache(cache: Path) -> Path:
    """Every binary as an executable stub; returns kwok's stage directory (empty)."""
    binaries = {
        "etcd": "etcd",
        "kube-apiserver": "kubernetes",
        "kube-controller-manager": "kubernetes",
        "kube-scheduler": "kubernetes",
        "kwok": "kwok",
    }
    for name, component in binaries.items():
        target = cache / f"{component}-{pinned_version(component)}" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("#!/bin/sh\n")
        target.chmod(0o755)
    stages = cache / f"kwok-{pinned_version('kwok')}" / "stages"
    stages.mkdir()
    return stages


def test_a_cache_from_before_a_stage_was_added_names_the_missing_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stages = _fake_cache(tmp_path)
    for stage in STAGE_FILES[1:]:
        (stages / stage).write_text("kind: Stage\n")
    monkeypatch.setenv("KUBESHIFT_TESTBIN_DIR", str(tmp_path))
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)

    with pytest.raises(MissingBinaries) as excinfo:
        locate()

    assert STAGE_FILES[0] in str(excinfo.value) and "scripts/testbin" in str(excinfo.value)


def test_kubebuilder_assets_take_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, assets = tmp_path / "cache", tmp_path / "assets"
    stages = _fake_cache(cache)
    for stage in STAGE_FILES:
        (stages / stage).write_text("kind: Stage\n")
    assets.mkdir()
    (assets / "kube-apiserver").write_text("#!/bin/sh\n")
    (assets / "kube-apiserver").chmod(0o755)
    monkeypatch.setenv("KUBESHIFT_TESTBIN_DIR", str(cache))
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets))

    found = locate()

    assert found.kube_apiserver == assets / "kube-apiserver"
    assert found.etcd == cache / f"etcd-{pinned_version('etcd')}" / "etcd"
    assert pinned_version("kubernetes").startswith("v1.")

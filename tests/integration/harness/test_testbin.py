"""Missing binaries fail with a message that says how to build them."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.sandbox.binaries import MissingBinaries, locate, pinned_version


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


def test_kubebuilder_assets_take_precedence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, assets = tmp_path / "cache", tmp_path / "assets"
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
    (cache / f"kwok-{pinned_version('kwok')}" / "stages").mkdir()
    assets.mkdir()
    (assets / "kube-apiserver").write_text("#!/bin/sh\n")
    (assets / "kube-apiserver").chmod(0o755)
    monkeypatch.setenv("KUBESHIFT_TESTBIN_DIR", str(cache))
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets))

    found = locate()

    assert found.kube_apiserver == assets / "kube-apiserver"
    assert found.etcd == cache / f"etcd-{pinned_version('etcd')}" / "etcd"
    assert pinned_version("kubernetes").startswith("v1.")

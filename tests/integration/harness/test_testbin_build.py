"""scripts/testbin: what it compiles once, and when a cached build no longer counts."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from automation.sandbox.binaries import pinned_version
from tests.support.scripts import load_script


@pytest.fixture(scope="module")
def script() -> ModuleType:
    return load_script("testbin")


def test_the_control_plane_kwok_and_the_cloud_controller_share_one_wrapper(
    script: ModuleType,
) -> None:
    """One go.mod: one version of each library, so shared packages compile once."""
    wrappers = {name: comp.wrapper for name, comp in script.COMPONENTS.items()}

    assert wrappers["kwok"] == wrappers["kubernetes"] == wrappers["cloud-provider-aws"]
    gomod = (wrappers["kubernetes"] / "go.mod").read_text()
    for name in ("kubernetes", "kwok", "cloud-provider-aws"):
        comp = script.COMPONENTS[name]
        assert f"\t{comp.module} {comp.version()}" in gomod
        assert comp.version() == pinned_version(name)  # the tests look where it builds
        for package in comp.binaries.values():
            assert f"\t{package}\n" in gomod  # a `tool` line: `go mod tidy` keeps its graph


def test_the_cloud_controller_is_built_for_the_control_planes_minor(
    script: ModuleType,
) -> None:
    """Its release line follows Kubernetes' minor, as upstream's version skew asks."""
    kube = script.COMPONENTS["kubernetes"].version().split(".")[:2]
    ccm = script.COMPONENTS["cloud-provider-aws"].version().split(".")[:2]

    assert ccm == kube


def test_every_patch_exists_and_names_its_target(script: ModuleType) -> None:
    patched = [comp for comp in script.COMPONENTS.values() if comp.patches]

    assert [comp.name for comp in patched] == ["external-dns"]
    for comp in patched:
        assert comp.own_module  # patches apply to a copy of the module only
        for target, patch in comp.patches:
            text = (comp.wrapper / patch).read_text()
            assert f"package {Path(target).parent.name}" in text


def _cached(script: ModuleType, root: Path, name: str, inputs: str) -> Path:
    comp = script.COMPONENTS[name]
    target = root / f"{name}-{comp.version()}"
    target.mkdir(parents=True)
    for binary in comp.binaries:
        (target / binary).write_text("#!/bin/sh\n")
        (target / binary).chmod(0o755)
    (target / script.STAMP).write_text(json.dumps({"inputs": inputs}))
    return target


def test_a_build_from_other_inputs_is_invalidated_before_anything_builds(
    script: ModuleType, tmp_path: Path
) -> None:
    current = script.COMPONENTS["etcd"].inputs_digest()
    fresh = _cached(script, tmp_path, "etcd", current)
    stale = _cached(script, tmp_path, "kwok", "0123456789abcdef")

    script.invalidate_stale(["etcd", "kwok"], tmp_path)

    assert (fresh / script.STAMP).is_file()
    assert not (stale / script.STAMP).exists()  # its waiters now wait for the rebuild
    assert script.is_complete(fresh, script.COMPONENTS["etcd"])
    assert not script.is_complete(stale, script.COMPONENTS["kwok"])


def test_the_inputs_digest_follows_the_wrapper_and_its_patches(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    comp = script.COMPONENTS["external-dns"]
    copy = tmp_path / comp.wrapper.name
    copy.mkdir()
    for path in comp.wrapper.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(script, "WRAPPERS", tmp_path)
    before = comp.inputs_digest()

    patch = copy / comp.patches[0][1]
    patch.write_text(patch.read_text() + "\n// changed\n")

    assert comp.inputs_digest() != before


def test_a_patched_copy_is_writable_and_carries_the_patch(
    script: ModuleType, tmp_path: Path
) -> None:
    comp = script.COMPONENTS["external-dns"]
    module = tmp_path / "module"
    (module / "provider" / "factory").mkdir(parents=True)
    (module / "provider" / "factory" / "provider.go").write_text("package factory // upstream\n")
    (module / "go.mod").write_text("module sigs.k8s.io/external-dns\n")
    for path in module.rglob("*"):
        path.chmod(0o555 if path.is_dir() else 0o444)  # as the module cache leaves them

    copy = script.patched_module_copy(comp, module, tmp_path / "root")

    patched = (copy / "provider" / "factory" / "provider.go").read_text()
    assert patched == (comp.wrapper / comp.patches[0][1]).read_text()
    assert (copy / "go.mod").read_text() == "module sigs.k8s.io/external-dns\n"
    for path in module.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # let tmp_path be removed


def test_a_module_without_the_patched_file_is_refused(script: ModuleType, tmp_path: Path) -> None:
    comp = script.COMPONENTS["external-dns"]
    module = tmp_path / "module"
    module.mkdir()
    (module / "go.mod").write_text("module sigs.k8s.io/external-dns\n")

    with pytest.raises(SystemExit, match=r"has no provider/factory/provider\.go to patch"):
        script.patched_module_copy(comp, module, tmp_path / "root")

"""How tests find the engine: override variable, then the build cache, then PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from automation.sandbox.binaries import MissingEngine, PulumiInstall, find_engine

pytestmark = pytest.mark.engine


def test_override_without_pulumi_fails_with_the_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBESHIFT_PULUMI_BIN_DIR", str(tmp_path))

    with pytest.raises(MissingEngine, match=r"scripts/build-pulumi"):
        find_engine()


def test_pulumi_on_path_is_used_when_the_cache_is_empty(
    pulumi_engine: PulumiInstall, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    on_path = tmp_path / "bin"
    on_path.mkdir()
    (on_path / "pulumi").symlink_to(pulumi_engine.pulumi)
    monkeypatch.delenv("KUBESHIFT_PULUMI_BIN_DIR", raising=False)
    monkeypatch.setenv("KUBESHIFT_TESTBIN_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PATH", str(on_path))

    found = find_engine()

    assert found.source == "PATH"
    assert found.pulumi.resolve() == pulumi_engine.pulumi.resolve()
    assert found.version == pulumi_engine.version


def test_nothing_anywhere_fails_with_the_build_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBESHIFT_PULUMI_BIN_DIR", raising=False)
    monkeypatch.setenv("KUBESHIFT_TESTBIN_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("PATH", str(tmp_path))

    with pytest.raises(MissingEngine, match=r"nor on PATH; run `scripts/build-pulumi`"):
        find_engine()

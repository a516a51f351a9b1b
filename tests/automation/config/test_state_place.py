"""Where a stack's journal and run lock live: with the stack's state, in the backend the
engine uses — found as the engine finds it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from automation.config.state_place import backend_url, state_place
from automation.core.documents import FileDocument
from tests.support.moto_fixtures import MotoServer


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text("name: shop\nruntime: python\n")
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("PULUMI_HOME", str(tmp_path / "pulumi-home"))
    return directory


def test_without_a_self_managed_backend_they_stay_on_this_machine(
    project: Path, tmp_path: Path
) -> None:
    place = state_place(project, "prod")
    assert not place.shared
    assert isinstance(place.journal, FileDocument)
    assert place.journal.path == tmp_path / "state" / "prod.journal.json"
    assert place.journal.path == place.local_journal


def test_a_file_backend_keeps_them_beside_the_stacks_state(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PULUMI_BACKEND_URL", (tmp_path / "backend").as_uri())
    place = state_place(project, "prod")
    assert place.shared
    assert place.journal.where == str(tmp_path / "backend/.kubeshift/shop/prod/journal.json")
    assert place.lock.where == str(tmp_path / "backend/.kubeshift/shop/prod/lock.json")
    assert place.local_journal == tmp_path / "state" / "prod.journal.json"


def test_an_s3_backend_keeps_them_under_its_prefix_in_its_bucket(
    project: Path, moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    moto.client("s3").create_bucket(
        Bucket="state", CreateBucketConfiguration={"LocationConstraint": moto.region}
    )
    url = f"s3://state/infra?region={moto.region}&endpoint={moto.endpoint_url}&use_path_style=1"
    monkeypatch.setenv("PULUMI_BACKEND_URL", url)
    place = state_place(project, "prod")
    assert (
        place.shared and place.journal.where == "s3://state/infra/.kubeshift/shop/prod/journal.json"
    )
    place.journal.replace(b"{}", None)
    keys = [o["Key"] for o in moto.client("s3").list_objects_v2(Bucket="state")["Contents"]]
    assert keys == ["infra/.kubeshift/shop/prod/journal.json"]


def test_the_backend_is_found_as_the_engine_finds_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert backend_url(project) is None  # nothing anywhere: Pulumi Cloud
    home = tmp_path / "pulumi-home"
    home.mkdir()
    (home / "credentials.json").write_text(json.dumps({"current": "s3://logged-in"}))
    assert backend_url(project) == "s3://logged-in"
    (project / "Pulumi.yaml").write_text("name: shop\nbackend:\n  url: file:///declared\n")
    assert backend_url(project) == "file:///declared"
    monkeypatch.setenv("PULUMI_BACKEND_URL", "s3://from-the-environment")
    assert backend_url(project) == "s3://from-the-environment"


def test_a_backend_kubeshift_cannot_write_yet_keeps_them_local_saying_so(
    project: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("PULUMI_BACKEND_URL", "gs://team-state")
    with caplog.at_level(logging.WARNING):
        place = state_place(project, "prod")
    assert not place.shared and "with gs://" in caplog.text


def test_a_broken_pulumi_yaml_names_no_backend_rather_than_failing_here(project: Path) -> None:
    (project / "Pulumi.yaml").write_text("name: [unclosed\n")
    assert backend_url(project) is None

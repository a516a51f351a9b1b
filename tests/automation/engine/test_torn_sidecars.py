"""A checkpoint sidecar a killed engine left empty is removed; a live writer's, a whole
one and another stack's are not."""

from __future__ import annotations

import os
import time
from pathlib import Path

from automation.engine.torn_sidecars import SETTLED, backend_root, repair, torn_sidecars

NOW = time.time()
"""The moment every check here is made at (``now=``): a slow machine does not age the
sidecar a live writer is filling."""


def _sidecar(root: Path, relative: str, text: str, *, age: float) -> Path:
    path = root / ".pulumi" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    then = NOW - age
    os.utime(path, (then, then))
    return path


def test_only_the_stacks_settled_torn_sidecars_are_taken(tmp_path: Path) -> None:
    old = SETTLED + 5
    torn = _sidecar(tmp_path, "stacks/kubeshift/local.json.attrs", "", age=old)
    backup = _sidecar(tmp_path, "stacks/kubeshift/local.json.bak.attrs", '{"Con', age=old)
    lock = _sidecar(tmp_path, "locks/organization/kubeshift/local/x.json.attrs", "", age=old)
    history = _sidecar(tmp_path, "history/kubeshift/local/a.history.json.attrs", "", age=old)
    _sidecar(tmp_path, "stacks/kubeshift/other.json.attrs", "", age=old)
    _sidecar(tmp_path, "stacks/kubeshift/local.json.gz.attrs", "", age=0)  # being written
    _sidecar(tmp_path, "history/kubeshift/local/b.history.json.attrs", "{}", age=old)
    # another project's stack of the same name, and a project named like the stack
    _sidecar(tmp_path, "stacks/other/local.json.attrs", "", age=old)
    _sidecar(tmp_path, "meta.yaml.attrs", "", age=old)  # the backend's own
    _sidecar(tmp_path, "history/local/prod/a.history.json.attrs", "", age=old)
    _sidecar(tmp_path, "locks/organization/local/prod/x.json.attrs", "", age=old)
    found = torn_sidecars(tmp_path, "kubeshift", "local", now=NOW)
    assert found == sorted([torn, backup, lock, history])


def test_a_backend_laid_out_before_projects_is_read_too(tmp_path: Path) -> None:
    old = SETTLED + 5
    torn = _sidecar(tmp_path, "stacks/local.json.attrs", "", age=old)
    lock = _sidecar(tmp_path, "locks/local/x.json.attrs", "", age=old)
    _sidecar(tmp_path, "stacks/prod.json.attrs", "", age=old)
    assert torn_sidecars(tmp_path, "kubeshift", "local", now=NOW) == sorted([torn, lock])


def test_repair_removes_them_in_a_file_backend_and_leaves_other_backends(
    tmp_path: Path,
) -> None:
    torn = _sidecar(tmp_path, "stacks/kubeshift/local.json.attrs", "", age=SETTLED + 5)
    assert repair("s3://bucket/state", "kubeshift", "local") == []
    assert torn.exists()
    removed = repair(tmp_path.as_uri(), "kubeshift", "local")
    assert removed == [".pulumi/stacks/kubeshift/local.json.attrs"]
    assert not torn.exists()
    assert repair(tmp_path.as_uri(), "kubeshift", "local") == []


def test_a_home_relative_backend_is_expanded() -> None:
    assert backend_root("file://~/state") == Path("~/state").expanduser()
    assert backend_root(None) is None

"""The real engine cannot read a stack whose checkpoint sidecar a killed writer left
empty; the repair ``kubeshift recover`` makes first gives the stack back as saved."""

from __future__ import annotations

import json
import os
import time

import pytest

from automation.config.project import project_name
from automation.engine.torn_sidecars import SETTLED, repair
from tests.support.engine_fixtures import EngineProject

pytestmark = pytest.mark.engine


def test_an_empty_checkpoint_sidecar_stops_every_read_until_it_is_removed(
    engine_project: EngineProject,
) -> None:
    engine_project.pulumi("up", "--yes", "--skip-preview")
    saved = json.loads(engine_project.pulumi("stack", "export").stdout)
    (sidecar,) = engine_project.backend.glob(f".pulumi/stacks/*/{engine_project.stack}.json.attrs")
    sidecar.write_text("")  # what a writer killed between truncating and writing leaves
    then = time.time() - SETTLED - 1
    os.utime(sidecar, (then, then))
    torn = engine_project.pulumi("stack", "export", check=False)
    assert torn.returncode != 0 and "failed to load checkpoint" in torn.stderr, torn.stderr
    project = project_name(engine_project.dir)
    removed = repair(engine_project.backend.as_uri(), project, engine_project.stack)
    assert removed == [str(sidecar.relative_to(engine_project.backend))]
    assert json.loads(engine_project.pulumi("stack", "export").stdout) == saved

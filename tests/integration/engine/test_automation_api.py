"""The engine built from Go modules under the Automation API, without kubeshift's runner.

These pin down what the runner relies on: the CLI reports the version it was built
as, a Python program with components and dynamic-provider resources deploys with no
plugin download, previews show real replaces, and outputs and URNs read back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pulumi import automation as auto

from automation.sandbox.binaries import pinned_pulumi_version as pinned_version
from tests.support.engine_fixtures import EngineProject

pytestmark = pytest.mark.engine


def _stack(project: EngineProject) -> auto.Stack:
    return auto.select_stack(project.stack, work_dir=str(project.dir))


def _ops(events: list[Any]) -> dict[str, set[str]]:
    """Resource name -> operations the engine announced for it."""
    found: dict[str, set[str]] = {}
    for event in events:
        pre = event.resource_pre_event
        if pre is not None:
            op = getattr(pre.metadata.op, "value", pre.metadata.op)
            found.setdefault(pre.metadata.urn.rsplit("::", 1)[-1], set()).add(str(op))
    return found


def test_engine_reports_the_pinned_version(engine_project: EngineProject) -> None:
    if engine_project.engine.source == "cache":
        assert engine_project.engine.version == pinned_version()
    proc = engine_project.pulumi("about", "--json", timeout=120)
    assert '"python"' in proc.stdout, proc.stdout[-2000:]


def test_up_deploys_components_and_dynamic_resources(engine_project: EngineProject) -> None:
    stack = _stack(engine_project)
    stack.set_config("kubeshift:phase", auto.ConfigValue("workers"))

    result = stack.up(on_output=lambda _line: None)

    assert result.summary.result == "succeeded"
    assert result.summary.resource_changes == {"create": 8}
    vpc_id = result.outputs["vpc_id"].value
    assert re.fullmatch(r"net-vpc-[0-9a-f]{8}", vpc_id)
    records = engine_project.records()
    subnets = sorted(r for r in records if r.startswith("net-subnet-"))
    assert [s[: len("net-subnet-0")] for s in subnets] == ["net-subnet-0", "net-subnet-1"]
    assert set(records) == {vpc_id, *subnets, *result.outputs["worker_group_ids"].value}
    assert records[vpc_id]["settings"] == {"tags": {"stage": "initial"}}

    resources = stack.export_stack().deployment["resources"]
    by_name = {r["urn"].rsplit("::", 1)[-1]: r for r in resources}
    assert by_name["net"]["type"] == "kubeshift:test:Network"
    assert by_name["workers-group-0"]["parent"] == by_name["workers"]["urn"]
    assert by_name["net-vpc"]["id"] == vpc_id
    # Nothing was downloaded: the only plugins are the ones shipped next to the CLI.
    plugins = Path(engine_project.env["PULUMI_HOME"], "plugins")
    assert not plugins.exists() or not any(plugins.iterdir()), list(plugins.iterdir())


def test_preview_shows_the_replace_a_cidr_change_causes(engine_project: EngineProject) -> None:
    stack = _stack(engine_project)
    stack.set_config("kubeshift:phase", auto.ConfigValue("workers"))
    stack.up(on_output=lambda _line: None)
    before = engine_project.records()

    stack.set_config("kubeshift:phase", auto.ConfigValue("move-vpc"))
    events: list[Any] = []
    preview = stack.preview(diff=True, on_event=events.append, on_output=lambda _line: None)

    ops = _ops(events)
    replaced = {"net-vpc", "net-subnet-0", "net-subnet-1", "workers-group-0", "workers-group-1"}
    for name in replaced:
        assert {"create-replacement", "replace", "delete-replaced"} <= ops[name], (name, ops)
    assert preview.change_summary[auto.OpType.REPLACE] == len(replaced)
    assert engine_project.records() == before, "a preview must not change anything"

    by_hand = engine_project.pulumi("preview", "--diff")
    assert "+-5 to replace" in by_hand.stdout, by_hand.stdout[-3000:]

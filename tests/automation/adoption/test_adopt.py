"""Planning and applying an adoption against a scripted engine: differences refuse the
import, ``--accept-updates`` imports around them, a replace is never accepted."""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from automation.adoption import adopt as adopt_module
from automation.adoption.models import AdoptedResource, Discovery
from automation.aws.clients import AwsAccess, AwsClients
from automation.config.clients import StaticClients
from automation.engine.adapter import PreviewOutcome, PropertyChange, ResourceChange, UpdateOutcome
from automation.session.adoption import AdoptRequest, execute_adoption
from components.contract.engine_vars import IMPORTS_VAR
from tests.support.moto_fixtures import MotoServer

REPO = Path(__file__).resolve().parents[3]
VPC = "aws:ec2/vpc:Vpc"
NAME = "demo-source-network-vpc"
URN = f"urn:pulumi:s::kubeshift::kubeshift:network:Network${VPC}::{NAME}"


@dataclass
class World:
    """What the scripted engine answers: a VPC whose ``tags`` (and maybe CIDR) differ."""

    replace: bool = False
    imported: bool = False
    updates: list[str] = field(default_factory=list)
    tags: tuple[PropertyChange, ...] = (
        PropertyChange('tags["team"]', "update", "payments", "platform"),
    )


@dataclass
class ScriptedEngine:
    world: World
    env: dict[str, str]

    def _ignored(self) -> list[str]:
        plan = json.loads(Path(self.env[IMPORTS_VAR]).read_text())
        return list(plan["ignore_changes"].get(f"{VPC}::{NAME}", []))

    def preview(self, targets: Sequence[str] = (), plan: Path | None = None) -> PreviewOutcome:
        tags = self.world.tags
        cidr = PropertyChange("cidrBlock", "update-replace", "10.1.0.0/16", "10.0.0.0/16")
        wanted = [*tags, cidr] if self.world.replace else [*tags]
        if IMPORTS_VAR in self.env:
            left = tuple(p for p in wanted if p.path.split("[")[0] not in self._ignored())
            step = ResourceChange("import", URN, VPC, NAME, (), left)
        elif self.world.imported and "tags" not in self.world.updates:
            step = ResourceChange("update", URN, VPC, NAME, ("tags",), tags)
        else:
            step = ResourceChange("same", URN, VPC, NAME)
        return PreviewOutcome(changes=(step,))

    def up(self, targets: Sequence[str] = (), plan: Path | None = None) -> UpdateOutcome:
        if IMPORTS_VAR in self.env:
            self.world.imported = True
        else:
            self.world.updates.append("tags")
        return UpdateOutcome(summary={}, outputs={})

    def carry(self, record: Any) -> None:
        return None

    def resource_urns(self) -> list[str]:
        return [URN] if self.world.imported else []

    def secret_config(self) -> dict[str, str]:
        return {}


@pytest.fixture(autouse=True)
def one_vpc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, moto: MotoServer) -> None:
    """One live VPC found; the account (moto) answers adoption's sign-in check."""
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    found = Discovery(
        stack="vpc-move-small", cluster="demo", phase="baseline",
        resources=[AdoptedResource(type=VPC, name=NAME, id="vpc-1", import_id="vpc-1")],
        problems=[], skipped=[], unmodelled=[],
    )  # fmt: skip
    monkeypatch.setattr(adopt_module, "discover", lambda *_: found)


def adopt(world: World, **options: bool) -> Any:
    return execute_adoption(
        AdoptRequest(REPO, "vpc-move-small", yes=True, **options),
        engine_factory=lambda _p, _s, _r, env: ScriptedEngine(world, env),  # type: ignore[arg-type,return-value]
        clients=StaticClients(aws=AwsClients(AwsAccess(region="us-west-2"))),
    )


def test_a_difference_refuses_the_import_with_one_line_for_it() -> None:
    world = World()
    report = adopt(world)
    assert report.outcome == "refused"
    assert [d.line() for d in report.differences] == [
        f'{NAME} ({VPC}): tags["team"] is payments live, platform declared'
    ]
    assert not world.imported


def test_accepted_updates_are_imported_around_and_then_made_by_the_next_phase() -> None:
    world = World()
    report = adopt(world, accept_updates=True)
    assert report.outcome == "adopted", report
    assert world.imported
    # the accepted difference is left for baseline's update, not made by adoption
    assert world.updates == []


def test_a_replace_is_never_accepted() -> None:
    world = World(replace=True)
    report = adopt(world, accept_updates=True)
    assert report.outcome == "refused"
    assert [d.replaces for d in report.differences] == [False, True]
    assert not world.imported


MARK = PropertyChange('tags["managed-by"]', "add", "(none)", "kubeshift", added=("managed-by",))


def test_only_kubeshifts_own_tags_missing_is_refused_with_the_way_past_it() -> None:
    world = World(tags=(MARK,))
    report = adopt(world)
    assert report.outcome == "refused" and not world.imported
    assert report.refusals[-1] == (
        "1 difference(s) only add kubeshift's own tags (managed-by, kubeshift.io/*) to 1 "
        "resource attribute(s); `--accept-own-tags` imports around them alone, and "
        "the next phase's update adds them."
    )


def test_accepted_own_tags_are_imported_around_and_then_added_by_the_next_phase() -> None:
    world = World(tags=(MARK,))
    report = adopt(world, accept_own_tags=True)
    assert report.outcome == "adopted", report
    assert world.imported and world.updates == []
    assert report.message == (
        "baseline now previews only the 1 accepted difference(s); the next phase's update "
        "makes them"
    )


def test_own_tags_are_not_accepted_beside_another_difference_in_the_same_tags() -> None:
    """Accepting ``tags`` would also let the next phase's update rewrite the team's
    tag: refused."""
    team = PropertyChange('tags["team"]', "update", "payments", "platform")
    world = World(tags=(MARK, team))
    report = adopt(world, accept_own_tags=True)
    assert report.outcome == "refused" and not world.imported
    assert {d.attribute for d in report.differences} == {'tags["managed-by"]', 'tags["team"]'}


POLICY = '{"Statement":[]}'
DELAY = PropertyChange(
    "enableDnsHostnames", "update", "false", "true", live_input=False, declared_input=True
)


@dataclass
class KeepingEngine(ScriptedEngine):
    """Shows the VPC's ``enableDnsHostnames`` as differing unless the program keeps
    the live value, through the import file or the stack file (and its kept file)."""

    project: Path = REPO

    def _kept(self) -> bool:
        from components.contract import kept_file
        from components.contract.keys import CLUSTER_KEY
        from components.contract.loading import load_stack_file

        stack_file = self.project / "stacks" / "Pulumi.vpc-move-small.yaml"
        in_file = kept_file.merge(load_stack_file(stack_file), CLUSTER_KEY)  # as the program
        if in_file[CLUSTER_KEY].get("kept_inputs", {}).get(NAME):
            return True
        if IMPORTS_VAR not in self.env:
            return False
        return NAME in json.loads(Path(self.env[IMPORTS_VAR]).read_text())["kept_inputs"]

    def preview(self, targets: Sequence[str] = (), plan: Path | None = None) -> PreviewOutcome:
        left = () if self._kept() else (DELAY,)
        if IMPORTS_VAR in self.env and not self.world.imported:
            return PreviewOutcome(changes=(ResourceChange("import", URN, VPC, NAME, (), left),))
        op = "update" if left else "same"
        return PreviewOutcome(changes=(ResourceChange(op, URN, VPC, NAME, (), left),))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    (copy / "stacks").mkdir(parents=True)
    (copy / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    stack = (REPO / "stacks" / "Pulumi.vpc-move-small.yaml").read_text()
    (copy / "stacks" / "Pulumi.vpc-move-small.yaml").write_text("# the team's own notes\n" + stack)
    return copy


def keep(world: World, project: Path, **options: bool) -> Any:
    return execute_adoption(
        AdoptRequest(project, "vpc-move-small", yes=True, **options),
        engine_factory=lambda _p, _s, _r, env: KeepingEngine(world, env, project),  # type: ignore[arg-type,return-value]
        clients=StaticClients(aws=AwsClients(AwsAccess(region="us-west-2"))),
    )


def test_an_in_place_difference_is_refused_with_the_way_to_keep_it(project: Path) -> None:
    report = keep(World(tags=()), project)
    assert report.outcome == "refused"
    assert "`--keep-live` keeps their live values" in report.refusals[-1]
    assert "kept_inputs" not in (project / "stacks" / "Pulumi.vpc-move-small.yaml").read_text()


def test_kept_live_values_are_written_to_the_stack_file_and_imported_as_they_run(
    project: Path,
) -> None:
    from components.contract.loading import load_config, load_stack_file

    stack_file = project / "stacks" / "Pulumi.vpc-move-small.yaml"
    before = stack_file.read_text().splitlines()
    world = World(tags=())
    planned = keep(world, project, keep_live=True, dry_run=True)
    assert planned.outcome == "planned"
    assert "kept_inputs" not in stack_file.read_text()  # a dry run writes nothing
    report = keep(world, project, keep_live=True)
    assert report.outcome == "adopted", report
    assert world.imported and world.updates == []
    assert report.kept[NAME]["enableDnsHostnames"].live is False
    assert "keeps 1 live value(s) under kubeshift:cluster.kept_inputs" in report.message
    text = stack_file.read_text()
    changed = [line for line in difflib.ndiff(before, text.splitlines()) if line[0] in "+-"]
    assert changed == [  # the rest of the file as it was, comments and layout included
        "+     kept_inputs:",
        "+       demo-source-network-vpc:",
        "+         enableDnsHostnames:",
        "+           live: false",
        "+           declared: true",
    ]
    kept = load_config(load_stack_file(stack_file)).cluster.kept_inputs
    assert kept[NAME]["enableDnsHostnames"].model_dump() == {"live": False, "declared": True}
    again = keep(world, project, keep_live=True)
    assert again.outcome == "unchanged" and stack_file.read_text() == text


def test_kept_live_values_go_to_the_kept_file_the_stack_names(project: Path) -> None:
    """A stack with a kept file keeps its live values there, out of the config Pulumi
    hands the program in one bounded environment string; the stack file is untouched."""
    from components.contract.loading import load_config, load_stack_file

    stack_file = project / "stacks" / "Pulumi.vpc-move-small.yaml"
    kept_file = stack_file.with_name("Pulumi.vpc-move-small.kept.yaml")
    kept_file.write_text("# kept by adopt\nkept_tags: {}\n")
    stack_file.write_text(
        stack_file.read_text().replace(
            "config:\n", "config:\n  kubeshift:kept: Pulumi.vpc-move-small.kept.yaml\n", 1
        )
    )
    stack_before = stack_file.read_text()
    report = keep(World(tags=()), project, keep_live=True)
    assert report.outcome == "adopted", report
    assert "Pulumi.vpc-move-small.kept.yaml keeps 1 live value(s) under kept_inputs" in (
        report.message
    )
    assert stack_file.read_text() == stack_before
    assert kept_file.read_text().startswith("# kept by adopt\nkept_tags: {}\nkept_inputs:\n")
    kept = load_config(load_stack_file(stack_file)).cluster.kept_inputs
    assert kept[NAME]["enableDnsHostnames"].model_dump() == {"live": False, "declared": True}


def test_what_could_not_be_kept_safely_is_not() -> None:
    from automation.adoption.kept_inputs import keepable
    from automation.adoption.models import Difference
    from components.contract.cluster_models import KeptInput

    replaced = Difference(
        name=NAME, type=VPC, attribute="cidrBlock", live="a", declared="b", replaces=True,
        live_input="10.1.0.0/16", declared_input="10.0.0.0/16",
    )  # fmt: skip
    hidden = replaced.model_copy(update={"replaces": False, "live_input": "[secret]"})
    tags = replaced.model_copy(update={"replaces": False, "attribute": 'tags["a"]'})
    grant = replaced.model_copy(
        update={"replaces": False, "type": "aws:iam/rolePolicy:RolePolicy", "attribute": "policy"}
    )
    boot = replaced.model_copy(
        update={"replaces": False, "type": "aws:ec2/launchTemplate:LaunchTemplate",
                "attribute": "userData"}
    )  # fmt: skip
    from pulumi.runtime import rpc

    following = replaced.model_copy(
        update={"replaces": False, "attribute": "mixedInstancesPolicy", "declared": '{"launc…',
                "declared_input": {"launchTemplate": {"version": rpc.UNKNOWN}}}
    )  # fmt: skip
    assert keepable([replaced, hidden, tags, grant, boot, following]) == {}
    assert keepable([replaced.model_copy(update={"replaces": False})]) == {
        NAME: {"cidrBlock": KeptInput(live="10.1.0.0/16", declared="10.0.0.0/16")}
    }


def test_kept_live_values_that_would_overflow_the_config_set_the_kept_sections_aside(
    tmp_path: Path,
) -> None:
    """A stack file whose proposal stayed just under the size a kept file is made for
    (seed 001's 75 groups: 55 kB) would pass Linux's bound on one environment string
    once ``--keep-live`` adds its values, and Pulumi could not start the program
    (``argument list too long``): the kept sections move to a kept file beside it."""
    import yaml

    from automation.adoption.kept_inputs import write
    from automation.core.errors import UserError
    from components.contract.cluster_models import KeptInput
    from components.contract.kept_file import SPLIT_AT, config_env_bytes, merge, resolve

    stack_file = tmp_path / "Pulumi.big.yaml"
    scripts = {f"big-workers-{n}": "#!/bin/bash\n" + "x" * 2000 for n in range(30)}
    stack_file.write_text(yaml.safe_dump({"config": {
        "aws:region": "us-east-1",
        "kubeshift:cluster": {"name": "big", "user_data": scripts, "names": {"a": "b"}},
    }}))  # fmt: skip
    assert config_env_bytes(yaml.safe_load(stack_file.read_text())["config"]) < SPLIT_AT
    kept = {f"big-workers-{n}": {"maxSize": KeptInput(live=9, declared=3)} for n in range(30)}
    kept["filler"] = {"description": KeptInput(live="y" * SPLIT_AT, declared="")}

    written = write(stack_file, kept)

    assert written == tmp_path / "Pulumi.big.kept.yaml"
    config = yaml.safe_load(stack_file.read_text())["config"]
    assert config["kubeshift:kept"] == "Pulumi.big.kept.yaml"
    assert config["kubeshift:cluster"] == {"name": "big"}
    assert config_env_bytes(config) < SPLIT_AT
    aside = yaml.safe_load(written.read_text())
    assert sorted(aside) == ["kept_inputs", "names", "user_data"]
    merged = merge(resolve(config, tmp_path), "kubeshift:cluster")["kubeshift:cluster"]
    assert merged["user_data"] == scripts and len(merged["kept_inputs"]) == 31
    with pytest.raises(UserError, match="already exists beside it"):
        stack_file.write_text(yaml.safe_dump({"config": {
            "kubeshift:cluster": {"name": "big", "user_data": scripts}}}))  # fmt: skip
        write(stack_file, kept)

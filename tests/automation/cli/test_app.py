"""The CLI through Typer's CliRunner: exit codes, one-line errors, JSON, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from automation.cli.app import app
from components.contract import registry
from components.contract.loading import load_config, load_stack_file

REPO = Path(__file__).resolve().parents[3]
STACK = "vpc-move-small"


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("KUBESHIFT_PROJECT_DIR", str(REPO))
    monkeypatch.setenv("KUBESHIFT_STATE_DIR", str(tmp_path / "state"))
    return CliRunner()


def one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    """The CLI's error output: exactly one line, no traceback."""
    text = result.stderr.strip()
    assert "Traceback" not in result.output + result.stderr
    assert len(text.splitlines()) == 1, text
    return text


def test_scenarios_lists_all_three(cli: CliRunner) -> None:
    result = cli.invoke(app, ["scenarios", "--json"])
    assert result.exit_code == 0, result.output
    ids = [row["id"] for row in json.loads(result.stdout)]
    assert sorted(ids) == ["cni-swap", "overlay-switch", "vpc-move"]


def test_plan_lists_phases_in_order(cli: CliRunner) -> None:
    result = cli.invoke(app, ["--stack", STACK, "plan", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    config = load_config(load_stack_file(REPO / "stacks" / f"Pulumi.{STACK}.yaml"))
    expected = registry.spec("vpc-move").phase_ids(config.cluster.control_plane.members)
    assert [p["id"] for p in plan["phases"]] == list(expected)
    by_id = {p["id"]: p for p in plan["phases"]}
    assert by_id["drain-workers"]["destructive"] is True
    assert by_id["target-network"]["destructive"] is False
    assert "every new worker joined and Ready" in by_id["target-workers"]["gates"]
    # each hook on the side it runs: what a reader (and benchmarks/faults) needs to aim at it
    for phase in plan["phases"]:
        assert sorted(phase["hooks_before"] + phase["hooks_after"]) == sorted(phase["hooks"])
    assert by_id["drain-workers"]["hooks_before"] and not by_id["retire-old-workers"]["hooks_after"]


def test_plan_table_output(cli: CliRunner) -> None:
    result = cli.invoke(app, ["--stack", STACK, "plan"])
    assert result.exit_code == 0
    assert "dns-cutover" in result.stdout and "control-plane-3" in result.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--stack", "nope", "plan"], 2, "Stack 'nope' has no file"),
        (["--stack", STACK, "render", "--phase", "warp"], 2, "Unknown phase 'warp'"),
        (["--stack", STACK, "run", "--from", "cleanup", "--to", "baseline"], 2, "comes after"),
        (["--stack", "nope", "status"], 2, "has no journal yet"),
    ],
    ids=["unknown-stack", "unknown-phase", "reversed-range", "no-journal"],
)
def test_user_errors_are_one_line(cli: CliRunner, args: list[str], code: int, message: str) -> None:
    result = cli.invoke(app, args)
    assert result.exit_code == code, result.output
    assert message in one_line_error(result)


def _bad_stack(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    document = yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())
    edit(document["config"])
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_overlapping_cidrs_are_refused_in_one_sentence(cli: CliRunner, tmp_path: Path) -> None:
    def overlap(config: dict) -> None:
        config["kubeshift:migration"]["target_network"]["cidr"] = "10.0.0.0/16"

    result = cli.invoke(app, ["render", "--config", str(_bad_stack(tmp_path, overlap))])
    assert result.exit_code == 2
    line = one_line_error(result)
    assert "overlaps" in line and "target_network" in line


def test_run_without_pulumi_cli_says_so_and_leaves_no_journal(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = cli.invoke(app, ["--stack", STACK, "run", "--yes"])
    assert result.exit_code == 2
    assert "`pulumi` CLI was not found" in one_line_error(result)
    assert not (tmp_path / "state").exists()


def test_dry_run_needs_no_engine_and_writes_nothing(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = cli.invoke(
        app, ["--stack", STACK, "run", "--dry-run", "--to", "target-network", "--json"]
    )
    assert result.exit_code == 0, result.output
    steps = json.loads(result.stdout)
    assert [s["step"] for s in steps] == ["config", "preview", "update"] * 2
    assert {s["status"] for s in steps} == {"would-run"}
    assert not (tmp_path / "state").exists()


HEAVY_MODULES = ("pulumi", "pulumi_aws", "boto3", "botocore", "kubernetes")
"""Libraries whose import alone takes about a second together; --help needs none."""


def test_help_imports_no_sdk() -> None:
    """``--help`` answers without the Pulumi, AWS or Kubernetes SDKs (what made it slow);
    asserted on what was imported, not on a wall clock that a busy machine stretches."""
    probe = (
        "import sys\n"
        "from automation.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "--help"],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert "Usage" in done.stdout
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_diff_of_the_example_shows_new_groups_and_removes_nothing(cli: CliRunner) -> None:
    result = cli.invoke(
        app,
        [
            "--stack",
            "vpc-move-example",
            "diff",
            "--from",
            "shared-resources",
            "--to",
            "target-workers",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    diff = json.loads(result.stdout)
    groups = [k for k in diff["added"] if k.startswith("aws:autoscaling/group:Group::")]
    assert len(groups) == 72
    assert diff["removed"] == []


def test_a_dry_run_names_the_steps_it_could_not_evaluate_and_exits_3(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = cli.invoke(
        app, ["--stack", STACK, "run", "--dry-run", "--to", "target-workers", "--json"]
    )
    assert result.exit_code == 3, result.output
    steps = json.loads(result.stdout)
    unknown = [s for s in steps if s["status"] == "unknown"]
    assert unknown and all("could not evaluate" in s["message"] for s in unknown)
    assert all(s["step"].startswith(("before:", "after:")) for s in unknown)
    engine_steps = [s for s in steps if s["step"] in {"config", "preview", "update"}]
    assert {s["status"] for s in engine_steps} == {"would-run"}
    assert "planned without the stack's outputs" in result.stderr
    assert "could not be evaluated now:" in result.stderr
    assert "target-workers/after:" in result.stderr
    assert not (tmp_path / "state").exists()


def test_every_render_is_checked_against_the_policies(cli: CliRunner, tmp_path: Path) -> None:
    def open_internal_ingress(config: dict) -> None:
        config["kubeshift:cluster"]["ingress"]["internal"] = True
        config["kubeshift:cluster"]["ingress"]["allowed_cidrs"] = ["0.0.0.0/0"]

    stack = str(_bad_stack(tmp_path, open_internal_ingress))
    result = cli.invoke(app, ["render", "--config", stack, "--phase", "baseline"])
    assert result.exit_code == 3, result.output
    assert "policy: [no-open-ingress]" in result.stderr
    assert "admits 0.0.0.0/0 on 443-443" in result.stderr
    clean = cli.invoke(app, ["--stack", STACK, "render", "--phase", "cleanup"])
    assert clean.exit_code == 0 and "policy:" not in clean.stderr


def test_status_shows_which_cluster_runs_each_cronjob(cli: CliRunner, tmp_path: Path) -> None:
    from automation.run.journal import Journal

    journal = Journal(tmp_path / "state" / "cni-swap-example.journal.json", "cni-swap-example")
    journal.start("cni-swap", "before:cronjobs-to-mirror")
    journal.finish(
        "cni-swap",
        "before:cronjobs-to-mirror",
        "2 CronJob(s)",
        details={
            "runs_on": {
                "shop/invoices": "mirror",
                "shop/exports": "neither (suspended by the user)",
            }
        },
    )
    journal.start("dns-to-primary", "after:cronjobs-to-primary")
    journal.finish("dns-to-primary", "after:cronjobs-to-primary", "1 CronJob(s)",
                   details={"runs_on": {"shop/invoices": "primary"}})  # fmt: skip
    result = cli.invoke(app, ["--stack", "cni-swap-example", "status"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    table = result.stdout[result.stdout.index("CronJobs: the cluster that runs each") :]
    rows = {line.split()[1]: line for line in table.splitlines() if "shop/" in line}
    assert "primary" in rows["shop/invoices"] and "mirror" not in rows["shop/invoices"]
    assert "neither (suspended by the user)" in rows["shop/exports"]

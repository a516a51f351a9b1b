"""What a newcomer reads at 80 columns or through a pipe: ids whole, flags without types."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
KUBESHIFT = str(Path(sys.executable).with_name("kubeshift"))


def _piped(*args: str, columns: int = 80) -> str:
    env = {**os.environ, "COLUMNS": str(columns), "KUBESHIFT_PROJECT_DIR": str(REPO)}
    env.pop("KUBESHIFT_SANDBOX", None)
    proc = subprocess.run(
        [KUBESHIFT, *args], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return proc.stdout


@pytest.mark.parametrize("columns", [80, 60])
def test_plan_keeps_every_phase_id_whole_when_piped(columns: int) -> None:
    ids = [
        p["id"]
        for p in json.loads(_piped("--stack", "vpc-move-example", "--json", "plan"))["phases"]
    ]
    table = _piped("--stack", "vpc-move-example", "plan", columns=columns)
    for phase in ids:
        assert f" {phase} " in table, f"{phase} was cut at {columns} columns"
    assert "…" not in table


def test_help_shows_flags_without_type_names_and_options_with_what_they_take() -> None:
    text = _piped("run", "--help")
    assert "<bool>" not in text and "<str>" not in text
    assert "--from PHASE" in text and "--stack NAME" in text
    assert "--dry-run" in text and "--yes" in text


def _nothing_found() -> Any:
    from automation.adoption.models import Discovery

    return Discovery(
        stack="local", cluster="c", phase="baseline", resources=[], problems=[], skipped=[],
        unmodelled=[],
    )  # fmt: skip


def test_an_adoption_report_says_each_kept_live_value_on_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from automation.adoption.models import AdoptReport
    from automation.cli.adopt import print_adoption
    from components.contract.cluster_models import KeptInput

    found = _nothing_found()
    metrics = ["GroupMinSize", "GroupMaxSize"]
    report = AdoptReport(
        stack="local", phase="baseline", outcome="planned", discovery=found,
        kept={
            "c-api-tg-443": {"deregistrationDelay": KeptInput(live=300, declared=30)},
            "c-nodes": {"enabledMetrics": KeptInput(live=metrics, declared=None)},
        },
    )  # fmt: skip
    print_adoption(report)
    lines = [line for line in capsys.readouterr().out.splitlines() if "keeps live" in line]
    assert lines == [
        "keeps live: c-api-tg-443 deregistrationDelay = 300 (kubeshift declares 30)",
        'keeps live: c-nodes enabledMetrics = ["GroupMinSize", "GroupMaxSize"] '
        "(kubeshift declares nothing)",
    ]


def test_an_adoption_report_names_what_terraform_and_kops_still_claim_and_how_to_release(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from automation.adoption.models import AdoptReport
    from automation.cli.adopt import print_adoption

    found = _nothing_found()
    move = "aws s3 mv s3://kops/c.k8s.local/instancegroup/nodes s3://kops/c.k8s.local/kubeshift-released/instancegroup/nodes"
    report = AdoptReport(
        stack="local", phase="baseline", outcome="planned", discovery=found,
        terraform_claims=["module.k8s.aws_lb.api"],
        terraform_release=["terraform state rm module.k8s.aws_lb.api"],
        kops_claims=["nodes"], kops_release=[move],
    )  # fmt: skip
    print_adoption(report)
    text = " ".join(capsys.readouterr().out.split())  # the console wraps at its width
    assert "Terraform still manages 1 of these" in text
    assert "terraform state rm module.k8s.aws_lb.api" in text
    assert "kops's state store still holds 1 instance group(s) of these (nodes;" in text
    assert "`kubeshift release --yes`" in text and move in text


def test_the_adoption_table_keeps_names_and_ids_whole_on_a_narrow_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from automation.adoption.models import AdoptedResource, AdoptReport, Discovery
    from automation.cli import common
    from automation.cli.adopt import print_adoption

    monkeypatch.setattr(common.out, "_width", 60)
    name = "production-eu-west-1-cluster-nodes-m5-xlarge-eu-west-1a-spot"
    arn = (
        "arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/prod-api/0123456789abcdef"
    )
    found = Discovery(
        stack="local", cluster="c", phase="baseline", problems=[], skipped=[], unmodelled=[],
        resources=[AdoptedResource(type="aws:lb/targetGroup:TargetGroup", name=name, id=arn,
                                   import_id=arn)],
    )  # fmt: skip
    print_adoption(AdoptReport(stack="local", phase="baseline", outcome="planned", discovery=found))
    text = capsys.readouterr().out
    assert name in text and arn in text


def test_a_reader_that_goes_away_stops_the_output_quietly(tmp_path: Path) -> None:
    """``kubeshift … | head``: once the reader closed the pipe, the command stops with
    the shell's SIGPIPE status and says nothing (it said "failed unexpectedly")."""
    read, write = os.pipe()
    os.close(read)  # gone before the command writes a byte
    env = {**os.environ, "KUBESHIFT_STATE_DIR": str(tmp_path), "KUBESHIFT_PROJECT_DIR": str(REPO)}
    env.pop("KUBESHIFT_SANDBOX", None)
    try:
        done = subprocess.run(
            [KUBESHIFT, "--stack", "vpc-move-example", "--json", "plan"],
            env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")

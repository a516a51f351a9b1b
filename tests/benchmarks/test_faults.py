"""``benchmarks/faults.py``'s checks, each shown able to fail, with no sandbox.

The benchmark's verdict rests on four checks: the final world equals the reference's,
every trial struck, the probe's reports show no Service without a ready endpoint, and
both worlds were actually read. Here each is fed what it must catch: a world with a
leftover (built as the sandbox builds its kops world, on the session's moto), a trial
that never struck, a probe report with a zero interval, a ``pulumi stack output`` that
failed. The same checks run against the shared rehearsal's finished world in
``tests/rehearsal/test_benchmark_checks.py``.
"""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

import benchmarks.faults
from automation.kube.probe import ProbeReport, ServiceAvailability, ZeroInterval
from automation.sandbox.provider.model import Aws
from automation.sandbox.world.build import build
from benchmarks.faults import (
    WorldUnreadable,
    availability_problems,
    aws_world,
    choose_faults,
    stack_outputs,
    unstruck,
    world_differences,
)
from tests.support.faults import Fault, Trial
from tests.support.moto_fixtures import MotoServer

SERVICES = ["shop/cart", "shop/web"]
NEW_PARTS = (
    "security groups", "security group rules", "launch templates", "iam roles",
    "iam instance profiles", "iam role policies", "network interfaces", "volumes",
    "elastic addresses", "nat gateways", "route tables",
)  # fmt: skip
"""The parts the benchmark did not compare before, each present in the kops world."""


def _built(values: dict[str, Any], moto: MotoServer) -> Aws:
    aws = Aws(values["aws:region"], moto.endpoint_url)
    build(values, aws)
    return aws


def test_two_builds_of_one_cluster_compare_equal_whatever_their_ids(
    kops_values: dict[str, Any], moto: MotoServer
) -> None:
    """Every id moto gives differs between the two builds, yet the worlds are equal:
    what differs between two sandboxes legitimately does not count."""
    first_values = copy.deepcopy(kops_values)
    first = aws_world(_built(first_values, moto).client)
    moto.reset()
    zone = moto.client("route53").create_hosted_zone(
        Name="local-demo.example.internal", CallerReference="again"
    )
    kops_values["kubeshift:cluster"]["dns"]["zone_id"] = zone["HostedZone"]["Id"].rsplit("/")[-1]
    second = aws_world(_built(kops_values, moto).client)
    assert world_differences(first, second) == []
    assert [part for part in NEW_PARTS if not first[part]] == []


def _duplicate_group(aws: Aws) -> None:
    """A second nodes group in the same VPC, tagged alike: a create the engine lost."""
    ec2 = aws.client("ec2")
    nodes = next(
        g for g in ec2.describe_security_groups()["SecurityGroups"]
        if g["GroupName"].startswith("nodes.")
    )  # fmt: skip
    ec2.create_security_group(
        GroupName=f"{nodes['GroupName']}-2", Description=nodes["Description"],
        VpcId=nodes["VpcId"],
        TagSpecifications=[{"ResourceType": "security-group", "Tags": nodes.get("Tags", [])}],
    )  # fmt: skip


def _extra_rule(aws: Aws) -> None:
    ec2 = aws.client("ec2")
    group = ec2.describe_security_groups()["SecurityGroups"][0]
    ec2.authorize_security_group_ingress(
        GroupId=group["GroupId"],
        IpPermissions=[{"IpProtocol": "tcp", "FromPort": 9999, "ToPort": 9999,
                        "IpRanges": [{"CidrIp": "10.9.0.0/16"}]}],
    )  # fmt: skip


def _template_version(aws: Aws) -> None:
    ec2 = aws.client("ec2")
    template = ec2.describe_launch_templates()["LaunchTemplates"][0]
    ec2.create_launch_template_version(
        LaunchTemplateId=template["LaunchTemplateId"], SourceVersion="1",
        LaunchTemplateData={"InstanceType": "t3.large"},
    )  # fmt: skip


def _role(aws: Aws) -> None:
    document = '{"Version": "2012-10-17", "Statement": []}'
    aws.client("iam").create_role(RoleName="nodes-leftover", AssumeRolePolicyDocument=document)


def _instance_profile(aws: Aws) -> None:
    aws.client("iam").create_instance_profile(InstanceProfileName="nodes-leftover")


def _interface(aws: Aws) -> None:
    ec2 = aws.client("ec2")
    subnet = ec2.describe_subnets()["Subnets"][0]
    ec2.create_network_interface(SubnetId=subnet["SubnetId"], Description="leftover")


def _volume(aws: Aws) -> None:
    ec2 = aws.client("ec2")
    zone = ec2.describe_subnets()["Subnets"][0]["AvailabilityZone"]
    ec2.create_volume(AvailabilityZone=zone, Size=20, VolumeType="gp3")


def _address(aws: Aws) -> None:
    aws.client("ec2").allocate_address(Domain="vpc")


def _nat_gateway(aws: Aws) -> None:
    ec2 = aws.client("ec2")
    subnet = ec2.describe_subnets()["Subnets"][0]
    allocation = ec2.allocate_address(Domain="vpc")["AllocationId"]
    ec2.create_nat_gateway(SubnetId=subnet["SubnetId"], AllocationId=allocation)


def _route(aws: Aws) -> None:
    ec2 = aws.client("ec2")
    table = ec2.describe_route_tables()["RouteTables"][0]
    gateway = ec2.describe_internet_gateways()["InternetGateways"][0]
    ec2.create_route(
        RouteTableId=table["RouteTableId"], DestinationCidrBlock="10.77.0.0/16",
        GatewayId=gateway["InternetGatewayId"],
    )  # fmt: skip


def _peering(aws: Aws) -> None:
    ec2 = aws.client("ec2")
    vpc = ec2.describe_vpcs()["Vpcs"][0]["VpcId"]
    other = ec2.create_vpc(CidrBlock="10.88.0.0/16")["Vpc"]["VpcId"]
    ec2.create_vpc_peering_connection(VpcId=vpc, PeerVpcId=other)


def test_a_leftover_of_each_kind_makes_the_worlds_differ(
    kops_values: dict[str, Any], moto: MotoServer
) -> None:
    """What a killed engine leaves (a second group, rule, template version, role…) is
    seen in its own part of the world; the old comparison saw none of these."""
    aws = _built(kops_values, moto)
    leftovers: tuple[tuple[str, Callable[[Aws], None]], ...] = (
        ("security groups", _duplicate_group),
        ("security group rules", _extra_rule),
        ("launch templates", _template_version),
        ("iam roles", _role),
        ("iam instance profiles", _instance_profile),
        ("network interfaces", _interface),
        ("volumes", _volume),
        ("elastic addresses", _address),
        ("nat gateways", _nat_gateway),
        ("route tables", _route),
        ("vpc peerings", _peering),
    )
    before = aws_world(aws.client)
    missed = []
    for part, leave in leftovers:
        leave(aws)
        after = aws_world(aws.client)
        if before[part] == after[part]:
            missed.append(part)
        before = after
    assert missed == []


def _trial(where: str, code: int | None) -> Trial:
    return Trial(Fault("target-network/update", "engine-kill"), where=where, code=code)


def test_a_trial_that_never_struck_is_not_counted_as_survived() -> None:
    struck = _trial("target-network/update", -9)
    not_reached = _trial("", 0)  # the run finished before the step was seen running
    finished_anyway = _trial("target-network/update", 0)
    assert unstruck([struck, not_reached, finished_anyway]) == [not_reached, finished_anyway]
    assert unstruck([struck]) == []


def _probed(report: ProbeReport, step: str = "before:drain-old-nodes") -> dict[str, Any]:
    """A journal record of a step run under the probe, as ``watched`` writes it."""
    return {
        "phase": "drain-workers",
        "step": step,
        "status": "succeeded",
        "message": f"drained. Availability: {report.message()}",
        "details": {"availability": report.as_dict()},
    }


def _report(**services: ServiceAvailability) -> ProbeReport:
    return ProbeReport(started_at="2026-01-01T00:00:00Z", seconds=30.0, services=services)


def test_the_availability_check_reads_the_probes_report() -> None:
    clean = _report(
        **{s: ServiceAvailability(s, ready=2, min_ready=1, max_ready=3) for s in SERVICES}
    )
    assert availability_problems([_probed(clean)], SERVICES) == []


def test_a_zero_endpoint_interval_fails_the_availability_check() -> None:
    """The old check looked for "zero-endpoint" in the message, which the probe never
    writes: this report passed it."""
    lost = ServiceAvailability(
        "shop/web", min_ready=0, zero_intervals=[ZeroInterval(start=3.0, end=4.5)]
    )
    kept = ServiceAvailability("shop/cart", ready=2, min_ready=1, max_ready=2)
    record = _probed(_report(**{"shop/web": lost, "shop/cart": kept}))
    assert "zero-endpoint" not in record["message"]
    problems = availability_problems([record], SERVICES)
    assert any("shop/web had no ready endpoint" in p for p in problems), problems
    assert any("shop/web minimum ready 0" in p for p in problems), problems


def test_probing_other_services_or_none_fails_the_availability_check() -> None:
    one = _report(**{"shop/web": ServiceAvailability("shop/web", ready=1, min_ready=1)})
    assert availability_problems([_probed(one)], SERVICES) == [
        "drain-workers/before:drain-old-nodes probed ['shop/web'], "
        "configured ['shop/cart', 'shop/web']"
    ]
    unprobed = {"phase": "baseline", "step": "update", "status": "succeeded", "details": {}}
    assert availability_problems([unprobed], SERVICES) == [
        "no step carries an availability report: nothing was probed"
    ]


def _shell(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)


def test_a_failed_stack_output_stops_the_comparison() -> None:
    """Read as ``{}`` before, so two failures compared as two equal worlds."""
    failed = _shell("echo 'error: no stack named local found' >&2; exit 255")
    with pytest.raises(WorldUnreadable, match="exited 255: error: no stack named local"):
        stack_outputs(failed)
    with pytest.raises(WorldUnreadable, match="no outputs"):
        stack_outputs(_shell("echo '{}'"))
    assert stack_outputs(_shell('echo \'{"vpc": "vpc-0abc123"}\'')) == {"vpc": "vpc-0abc123"}


def test_no_fault_is_aimed_at_the_adopted_first_phase(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stack is adopted, so ``run`` never runs baseline's steps: a fault aimed there
    could not strike, and stopped a full run at its first trial (issue 50)."""
    phase = {"gates_before": [], "gates_after": ["g"], "hooks_before": ["h"], "hooks_after": []}
    plan = {"phases": [{"id": name, **phase} for name in ("baseline", "a", "b")]}
    done = subprocess.CompletedProcess([], 0, stdout=json.dumps(plan), stderr="")
    monkeypatch.setattr(benchmarks.faults, "_kubeshift", lambda *args, **kwargs: done)
    faults = choose_faults({}, "local", 100, seed=1)
    assert len(faults) == 10  # a and b: config, before, preview, update, after
    assert not [f for f in faults if f.at.startswith("baseline/")]


def test_a_fault_is_aimed_only_at_a_side_of_a_phase_that_has_a_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A phase with a before-hook and nothing after it (ingress-nodeport): a full run drew
    ``after:*`` there, which could not strike, and stopped at that trial (issue 50)."""
    before_only = {"gates_before": [], "gates_after": [], "hooks_before": ["h"], "hooks_after": []}
    after_only = {"gates_before": [], "gates_after": ["g"], "hooks_before": [], "hooks_after": []}
    plan = {"phases": [{"id": "baseline", **before_only}, {"id": "a", **before_only},
                       {"id": "b", **after_only}]}  # fmt: skip
    done = subprocess.CompletedProcess([], 0, stdout=json.dumps(plan), stderr="")
    monkeypatch.setattr(benchmarks.faults, "_kubeshift", lambda *args, **kwargs: done)

    points = {f.at for f in choose_faults({}, "local", 100, seed=1)}

    assert points == {"a/config", "a/before:*", "a/preview", "a/update",
                      "b/config", "b/preview", "b/update", "b/after:*"}  # fmt: skip


def test_a_reset_builds_aws_managed_policies_in_the_sandbox_partition_only(
    kops_values: dict[str, Any], moto: MotoServer
) -> None:
    """The reset between two world builds is cheap enough not to outlast its deadline
    on a loaded machine: AWS's managed policies exist in ``aws`` (where the sandbox's
    regions are) and are built for no other partition."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.iam.models import iam_backends

    moto.reset()
    arn = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
    policy = moto.client("iam").get_policy(PolicyArn=arn)["Policy"]
    assert policy["Arn"] == arn
    built = {
        partition: len(backend.aws_managed_policies)
        for partition, backend in iam_backends[DEFAULT_ACCOUNT_ID].items()
    }
    assert built.pop("aws") > 1000, built
    assert set(built.values()) <= {0}, built

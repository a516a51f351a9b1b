"""The rehearsal starts where a user starts: a live cluster kops built, which no Pulumi
state knows and whose resources carry kops's names, taken into the stack by ``kubeshift
adopt`` through the real engine."""

from __future__ import annotations

import re

import pytest

from automation.review.render import render_program
from automation.sandbox.boots import nodeup_config_hash, nodeup_config_key
from automation.sandbox.world.kops import DESCRIPTIONS as KOPS_DESCRIPTIONS
from automation.sandbox.world.kops import STATE_STORE, domain, nodeup_script
from components.contract.loading import load_stack_file
from components.security_groups import DESCRIPTIONS
from tests.rehearsal.conftest import STACK, Rehearsal, sandbox_client

RTA = "aws:ec2/routeTableAssociation:RouteTableAssociation"
"""What the user who added the ingress load balancer's group wrote as its description."""

pytestmark = [pytest.mark.rehearsal]


def nodeup_scripts(rehearsal: Rehearsal, names: dict[str, str]) -> list[str]:
    """kops's boot script of each launch template ``names`` (kept names) keeps: nodeup
    for its instance group, naming the hash of the group's file in kops's state store."""
    dns = domain("local-demo")
    store = rehearsal.client("s3")
    scripts = []
    for key, name in names.items():
        if key.startswith("launch-template:"):
            group, _, rest = name.partition(".")
            role = "ControlPlane" if rest.startswith("masters.") else "Node"
            stored = store.get_object(Bucket=STATE_STORE, Key=nodeup_config_key(dns, role, group))
            config_hash = nodeup_config_hash(stored["Body"].read())
            scripts.append(nodeup_script(group, dns, role, config_hash=config_hash))
    return sorted(scripts)


def test_without_the_names_kops_gave_nothing_is_imported_and_the_way_is_named(
    rehearsal: Rehearsal,
) -> None:
    unnamed = rehearsal.adoption.unnamed
    assert unnamed.code != 0
    report = unnamed.json()
    assert report["outcome"] == "refused"
    assert report["imported"] == [] and report["recorded"] == []
    assert len(report["discovery"]["resources"]) > 0  # what was found is still listed
    refusals = report["refusals"]
    assert "local-demo-common-sg-node: no live security group local-demo-node in" in (
        " ".join(refusals)
    )
    assert (
        "`kubeshift adopt --write-config FILE` proposes kubeshift:cluster.names" in (refusals[-1])
    )


def test_without_kops_descriptions_and_boot_scripts_nothing_is_imported(
    rehearsal: Rehearsal,
) -> None:
    """kops's groups would be replaced (EC2 cannot change a description) and its
    workers' templates would boot kubeshift's script: adoption refuses both."""
    unkept = rehearsal.adoption.unkept
    assert unkept.code != 0, unkept.stderr[-3000:]
    report = unkept.json()
    assert report["outcome"] == "refused"
    assert report["imported"] == [] and report["recorded"] == []
    kops = {
        "node": KOPS_DESCRIPTIONS["nodes"],
        "control-plane": KOPS_DESCRIPTIONS["masters"],
        "api-lb": KOPS_DESCRIPTIONS["api-elb"],
    }
    described = {
        d["name"]: (d["live"], d["declared"], d["replaces"])
        for d in report["differences"]
        if d["attribute"] == "description" and d["type"] == "aws:ec2/securityGroup:SecurityGroup"
    }
    assert described == {
        f"local-demo-common-sg-{role}": (live, DESCRIPTIONS[role], True)
        for role, live in kops.items()
    }
    # one sentence per group, naming what forces the replacement; the groups' own rules
    # follow them (their group's id is not known before the update)
    sentence = (
        "The first phase would replace local-demo-common-sg-{} "
        "(aws:ec2/securityGroup:SecurityGroup): description cannot change in place."
    )
    grants = "The first phase would create local-demo-control-plane-identity-inline "
    created = [r for r in report["refusals"] if r.startswith(grants)]
    *causes, followed, keep_live = [r for r in report["refusals"] if r not in created]
    assert sorted(causes) == sorted(sentence.format(role) for role in kops)
    # kubeshift's script on the members would need kubeshift's grants, which kops's
    # role lacks: their create is refused too, and says why
    assert len(created) == 1 and "kubeshift:cluster.user_data keeps" in created[0], created
    assert keep_live.startswith("Some differences are attributes AWS changes in place")
    assert re.fullmatch(
        r"The first phase would also replace \d+ resource\(s\) that take the new id of a "
        r"resource replaced above, known only after the update: .*SecurityGroup.*Rule.*\.",
        followed,
    ), followed
    # each template's boot script differs, an update in place, from kops's nodeup:
    # shown where the two scripts part
    proposed = load_stack_file(rehearsal.adoption.proposed_file)
    scripts = proposed["kubeshift:cluster"]["user_data"]
    assert sorted(scripts.values()) == nodeup_scripts(
        rehearsal, proposed["kubeshift:cluster"]["names"]
    )
    del proposed["kubeshift:cluster"]["names"]  # the names kubeshift derives, as scripts' keys
    templates = {
        r.name
        for r in render_program(proposed, "baseline").resources
        if r.type == "aws:ec2/launchTemplate:LaunchTemplate" and r.inputs.get("name") in scripts
    }
    booted = {
        d["name"]: (d["live"], re.sub(r" of \d+:", " of N:", d["declared"]), d["replaces"])
        for d in report["differences"]
        if d["attribute"] == "userData"
    }
    nodeup_lines = len(next(iter(scripts.values())).splitlines())
    kubeshifts = "script line 2 of N: set -euo pipefail"
    live = f"script line 2 of {nodeup_lines}: set -o errexit"
    assert booted == {name: (live, kubeshifts, False) for name in templates}
    assert len(booted) == 5  # two worker templates, three members'


KOPS_SETTINGS = {
    "aws:autoscaling/group:Group": {"enabledMetrics", "healthCheckGracePeriod"},
    "aws:lb/targetGroup:TargetGroup": {"deregistrationDelay"},
    "aws:lb/loadBalancer:LoadBalancer": {"enableCrossZoneLoadBalancing"},
    "aws:ec2/launchTemplate:LaunchTemplate": {"networkInterfaces", "vpcSecurityGroupIds"},
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": {"description"},
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": {"description"},
}
"""What kops set otherwise than kubeshift declares, each changeable in place (its rules
carry no description)."""


def test_kops_settings_kubeshift_declares_otherwise_are_each_one_line_and_refused(
    rehearsal: Rehearsal,
) -> None:
    """With the whole proposal: the names, descriptions and boot scripts agree, and
    what is left is each of kops's own settings AWS can change in place."""
    differing = rehearsal.adoption.differing
    assert differing.code != 0
    report = differing.json()
    assert report["outcome"] == "refused" and report["imported"] == []
    found: dict[str, set[str]] = {}
    following: dict[str, str] = {}
    for difference in report["differences"]:
        assert not difference["replaces"], difference
        attribute = difference["attribute"].split("[")[0].split(".")[0]
        if attribute in ("launchTemplate", "mixedInstancesPolicy"):
            # a group follows its template: the version it would make is not known yet
            following[difference["name"]] = attribute
        found.setdefault(difference["name"], set()).add(attribute)
    for name, attribute in following.items():
        found[name].discard(attribute)
    types = {r["name"]: r["type"] for r in report["discovery"]["resources"]}
    assert found == {
        name: KOPS_SETTINGS[type_] for name, type_ in types.items() if type_ in KOPS_SETTINGS
    }
    # 5 groups and their 5 templates, kops's API target group and balancer, and the 4
    # rules of kops's that kubeshift declares too (the rest of what kubeshift declares
    # kops never built: adoption adds it)
    assert len(found) == 16
    assert following == {
        name: "launchTemplate" if "control-plane" in name else "mixedInstancesPolicy"
        for name, type_ in types.items()
        if type_ == "aws:autoscaling/group:Group"
    }
    lines = {d["name"]: d for d in report["differences"] if d["attribute"] == "deregistrationDelay"}
    assert {(d["live"], d["declared"]) for d in lines.values()} == {("300", "30")}
    assert report["refusals"][-1].startswith(
        "Some differences are attributes AWS changes in place: `--keep-live` keeps"
    )


def test_keep_live_writes_kops_settings_to_the_stack_file_and_declares_them(
    rehearsal: Rehearsal,
) -> None:
    adopted = rehearsal.adoption.adopted.json()
    kept = adopted["kept"]
    assert {name: set(found) for name, found in kept.items()} == {
        name: KOPS_SETTINGS[r["type"]]
        for r in adopted["discovery"]["resources"]
        if (name := r["name"]) and r["type"] in KOPS_SETTINGS
    }
    groups = [found for name, found in kept.items() if "healthCheckGracePeriod" in found]
    assert {(g["healthCheckGracePeriod"]["live"], g["healthCheckGracePeriod"]["declared"])
            for g in groups} == {(0, 300), (0, 600)}  # fmt: skip
    assert adopted["message"] == (
        f"baseline now previews no change; Pulumi.{STACK}.yaml keeps 26 live value(s) under "
        "kubeshift:cluster.kept_inputs"
    )
    stack_file = load_stack_file(rehearsal.adoption.stack_file)
    assert stack_file["kubeshift:cluster"]["kept_inputs"] == kept


def test_a_dry_run_maps_every_resource_and_imports_nothing(rehearsal: Rehearsal) -> None:
    planned = rehearsal.adoption.planned
    assert planned.code == 0, planned.stderr[-3000:]
    report = planned.json()
    assert report["outcome"] == "planned"
    assert report["refusals"] == [] and report["differences"] == []
    assert report["kept"] == rehearsal.adoption.adopted.json()["kept"]
    discovered = report["discovery"]["resources"]
    assert {r["name"] for r in discovered} == set(report["imported"]) | set(report["recorded"])
    # the adoption that followed imported what the dry run planned: it had imported nothing
    adopted = rehearsal.adoption.adopted.json()
    assert sorted(adopted["imported"]) == sorted(report["imported"])
    # what kops never built, planned as an addition beside the imports, and added: the
    # ingress load balancer kubeshift declares, which now runs under kubeshift's name
    additions = {a["name"] for a in report["discovery"]["additions"]}
    assert set(report["added"]) == additions and "local-demo-ingress-lb" in additions
    assert sorted(adopted["added"]) == sorted(report["added"])


def test_adoption_imports_the_live_ids_and_leaves_a_baseline_that_changes_nothing(
    rehearsal: Rehearsal,
) -> None:
    report = rehearsal.adoption.adopted.json()
    assert report["outcome"] == "adopted", report
    assert report["message"].startswith("baseline now previews no change;")
    by_name = {r["name"]: r for r in report["discovery"]["resources"]}
    vpcs = rehearsal.client("ec2").describe_vpcs()["Vpcs"]
    source = next(v["VpcId"] for v in vpcs if v["CidrBlock"] == "10.0.0.0/16")
    assert by_name["local-demo-source-network-vpc"]["id"] == source
    # the source network outlives the migration: its associations are the ones imported
    tables = rehearsal.client("ec2").describe_route_tables(
        Filters=[{"Name": "vpc-id", "Values": [source]}]
    )["RouteTables"]
    live = {
        (a["SubnetId"], a["RouteTableId"]): a["RouteTableAssociationId"]
        for t in tables for a in t["Associations"] if a.get("SubnetId")
    }  # fmt: skip
    associations = [r for r in by_name.values() if r["type"] == RTA]
    assert len(associations) == 4
    for association in associations:
        subnet, table = association["import_id"].split("/")
        assert live[(subnet, table)] == association["id"]
    # target-group attachments cannot be imported: recorded by a create AWS ignores
    assert all(
        by_name[name]["type"] == "aws:autoscaling/attachment:Attachment"
        for name in report["recorded"]
    )
    journal = rehearsal.kubeshift("--stack", STACK, "status", "--json").json()
    adopt = next(r for r in journal if r["step"] == "adopt")
    assert adopt["phase"] == "baseline" and adopt["status"] == "succeeded"


def test_adopting_again_changes_nothing(rehearsal: Rehearsal) -> None:
    again = rehearsal.adoption.again
    assert again.code == 0, again.stderr[-3000:]
    report = again.json()
    assert report["outcome"] == "unchanged"
    assert report["imported"] == [] and report["recorded"] == []
    assert len(report["already"]) == len(report["discovery"]["resources"])


def test_the_proposed_stack_file_describes_the_cluster_kops_built(
    rehearsal: Rehearsal,
) -> None:
    """``--write-config`` reads the cluster block back from what runs, kops's names
    included: the program then declares, at baseline, the resources the stack file the
    world was built from declares, under the same physical names. kops's instance groups
    are its pools, one launch template and one group over both AZs each."""
    proposed = rehearsal.adoption.proposed
    assert proposed.code == 0, proposed.stderr[-3000:]
    assert "proposed 2 worker pools from 5 groups and 3 control-plane members" in proposed.stdout
    built_from = load_stack_file(rehearsal.adoption.built_from)
    found = load_stack_file(rehearsal.adoption.proposed_file)
    cluster = found["kubeshift:cluster"]
    world = rehearsal.adoption.world_names
    assert set(cluster["names"].values()) == world
    assert "master-us-west-2a-1.masters.local-demo.k8s.local" in world
    assert found["kubeshift:migration"] == built_from["kubeshift:migration"]
    # kops's state store, as the nodes' boot script names it
    assert found["kubeshift:runtime"]["kops_state"] == f"s3://{STATE_STORE}/{domain('local-demo')}"
    # each of kops's worker instance groups spans both AZs and types: a pool of one group
    pools = [(p["name"], p["group_per"]) for p in cluster["worker_pools"]]
    assert pools == [("general-on-demand", "capacity"), ("general-spot", "capacity")]
    # kops wrote none of kubeshift's own tags, and the stack declares none
    assert cluster["own_tags"] is False
    # nor a group its workers and members share: kops's own rules admit them
    assert cluster["shared_group"] is False
    # kops's own tags are kept, and the names kops gave the parts of its VPC
    kept = cluster["kept_tags"]
    assert {"kops.k8s.io/instancegroup", "k8s.io/role/node", "SubnetType", "k8s.io/etcd/main"} < {
        key for tags in kept.values() for key in tags
    }
    dns = domain("local-demo")
    network = "local-demo-source-network"
    expected = {
        "vpc": dns, "igw": dns, "public-rt": dns,
        "private-rt-us-west-2b": f"private-us-west-2b.{dns}",
        "private-us-west-2b": f"us-west-2b.{dns}",
        "public-us-west-2b": f"utility-us-west-2b.{dns}",
        "nat-eip-us-west-2a": f"us-west-2a.{dns}",
    }  # fmt: skip
    assert {part: kept[f"{network}-{part}"]["Name"] for part in expected} == expected
    # and kops's descriptions of its groups, which EC2 cannot change
    assert cluster["descriptions"] == {
        "local-demo-api-lb": KOPS_DESCRIPTIONS["api-elb"],
        "local-demo-control-plane": KOPS_DESCRIPTIONS["masters"],
        "local-demo-node": KOPS_DESCRIPTIONS["nodes"],
    }
    # and the boot scripts kops wrote into its templates: nodeup, each for its group
    assert sorted(cluster["user_data"].values()) == nodeup_scripts(rehearsal, cluster["names"])
    # the program names what it declares at baseline as the world named it, and what
    # adoption adds (the ingress load balancer kops never built) as kubeshift names it
    rendered = render_program(found, "baseline").resources
    physical = {
        str(r.inputs["name"])
        for r in rendered
        if isinstance(r.inputs.get("name"), str) and r.type != "aws:route53/record:Record"
    }
    volumes = {str(r.inputs["tags"]["Name"]) for r in rendered if r.type == "aws:ebs/volume:Volume"}
    added = {"local-demo-ingress", "local-demo-ingress-lb", "local-demo-ingress-80",
             "local-demo-ingress-443"}  # fmt: skip
    assert physical | volumes == world | added and not added & world


def test_what_the_program_does_not_model_is_listed_and_left_alone(rehearsal: Rehearsal) -> None:
    stray = rehearsal.adoption.stray_group
    unmodelled = rehearsal.adoption.adopted.json()["discovery"]["unmodelled"]
    assert [u["kind"] for u in unmodelled if u["arn"].endswith(stray)] == ["ec2:security-group"]
    # the rest are kops's own rules in the groups adoption took (SSH, IPv6 egress, ...)
    # and its roles' inline policies (kops's grants): nothing kubeshift declares is among
    # them, every resource of ours was mapped
    rest = [u for u in unmodelled if not u["arn"].endswith(stray)]
    assert {u["kind"] for u in rest} == {"ec2:security-group-rule", "iam:role-policy"}
    rules = {u["arn"].rsplit("/", 1)[-1] for u in rest if u["kind"] == "ec2:security-group-rule"}
    adopted = rehearsal.adoption.adopted.json()["discovery"]["resources"]
    taken = {r["id"] for r in adopted if "SecurityGroup" in r["type"] and "Rule" in r["type"]}
    # every rule the world made is either one kubeshift declares, taken, or left alone
    assert rules | taken == set(rehearsal.adoption.kops_rules) and not rules & taken
    assert len(rules) == 14 and len(taken) == 4
    dns = domain("local-demo")
    policies = sorted(u["arn"] for u in rest if u["kind"] == "iam:role-policy")
    assert policies == [f"{role}.{dns}:{role}.{dns}" for role in ("masters", "nodes")]
    # the whole migration later, they are still there
    groups = rehearsal.client("ec2").describe_security_groups(GroupIds=[stray])
    assert [g["GroupName"] for g in groups["SecurityGroups"]] == ["bastion"]
    iam = rehearsal.client("iam")
    for role in ("masters", "nodes"):
        listed = iam.list_role_policies(RoleName=f"{role}.{dns}")["PolicyNames"]
        assert f"{role}.{dns}" in listed, listed
    # and kubeshift added no grant of its own: every member, moved ones too, booted
    # kops's nodeup, which attaches nothing through kubeshift's script
    assert sorted(iam.list_role_policies(RoleName=f"masters.{dns}")["PolicyNames"]) == [
        f"masters.{dns}"
    ]


def test_kops_lets_go_of_every_instance_group_adopted_before_the_run(
    rehearsal: Rehearsal,
) -> None:
    """adopt names the instance groups kops's state store still holds of what it took;
    ``release --dry-run`` shows them and moves nothing; ``release --yes`` moves each spec
    aside, read back from moto's S3: kops holds no group any more, and every group's
    nodeup configuration is still where the nodes read it."""
    adoption = rehearsal.adoption
    claimed = sorted(adoption.adopted.json()["kops_claims"])
    assert len(claimed) == 5 and sum(g.startswith("master-") for g in claimed) == 3
    dry = adoption.release_dry_run.json()
    assert sorted(dry["groups"]) == claimed and dry["moved"] == []
    released = adoption.released.json()
    assert sorted(released["moved"]) == claimed
    s3 = sandbox_client(rehearsal.sandbox, "s3")
    cluster = domain("local-demo")

    def keys(folder: str) -> list[str]:
        listed = s3.list_objects_v2(Bucket=STATE_STORE, Prefix=f"{cluster}/{folder}")
        return sorted(o["Key"].rsplit("/", 1)[-1] for o in listed.get("Contents", []))

    assert keys("instancegroup/") == []
    assert keys("kubeshift-released/instancegroup/") == claimed
    assert len(keys("igconfig/")) == len(claimed)

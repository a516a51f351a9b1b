"""A Terraform v4 state read as Terraform writes it: its addresses, what it claims, and
the commands that release it; from a file or from S3 (moto)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from automation.aws.terraform_state import (
    address_of,
    claims_in,
    release_commands,
    state_claims,
    still_claimed,
)
from automation.core.errors import ConfigError
from tests.support.moto_fixtures import MotoServer

TG_ARN = (
    "arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/k8s-ingress/6d0ecf831eec9f09"
)


def _resource(module: str, mode: str, type_: str, name: str, *instances: Any) -> dict[str, Any]:
    found = {
        "mode": mode,
        "type": type_,
        "name": name,
        "provider": 'provider["registry.terraform.io/hashicorp/aws"]',
    }
    return {**({"module": module} if module else {}), **found, "instances": list(instances)}


def _instance(key: object, **attributes: str) -> dict[str, Any]:
    return {**({"index_key": key} if key is not None else {}), "schema_version": 0,
            "attributes": attributes}  # fmt: skip


STATE = {
    "version": 4,
    "terraform_version": "1.9.8",
    "serial": 42,
    "lineage": "9a1b7c0e-0000-4000-8000-000000000001",
    "outputs": {},
    "resources": [
        _resource(
            'module.workers["m5-large-a-ondemand"]',
            "managed",
            "aws_autoscaling_group",
            "this",
            _instance(
                None,
                id="k8s-prod-m5-large-a-ondemand",
                arn="arn:aws:autoscaling:eu-west-1:123456789012:autoScalingGroup:x",
            ),
        ),
        _resource(
            "module.control_plane",
            "managed",
            "aws_ebs_volume",
            "etcd",
            _instance(0, id="vol-0aaa"),
            _instance(1, id="vol-0bbb"),
        ),
        _resource(
            "", "managed", "aws_lb_target_group", "ingress", _instance(None, id=TG_ARN, arn=TG_ARN)
        ),
        _resource("", "managed", "aws_security_group", "nodes", _instance(None, id="sg-0nodes")),
        _resource(
            "",
            "managed",
            "aws_security_group_rule",
            "nodes_from_lb",
            _instance(None, id="sgrule-1234", security_group_id="sg-0nodes"),
        ),
        _resource("", "data", "aws_ami", "node", _instance(None, id="ami-0data")),
    ],
}


def test_a_state_claims_each_managed_instance_under_the_address_terraform_gives_it() -> None:
    claims = claims_in(json.dumps(STATE), "state.tfstate")
    assert [c.address for c in claims] == [
        'module.workers["m5-large-a-ondemand"].aws_autoscaling_group.this',
        "module.control_plane.aws_ebs_volume.etcd[0]",
        "module.control_plane.aws_ebs_volume.etcd[1]",
        "aws_lb_target_group.ingress",
        "aws_security_group.nodes",
        "aws_security_group_rule.nodes_from_lb",
    ]  # a data source reads, it claims nothing
    assert address_of({"type": "aws_instance", "name": "x"}, 2.0) == "aws_instance.x[2]"


def test_what_kubeshift_adopts_is_matched_by_id_arn_or_a_rules_group() -> None:
    claims = claims_in(json.dumps(STATE), "state.tfstate")
    adopted = ["k8s-prod-m5-large-a-ondemand", TG_ARN, "sg-0nodes", "vol-0bbb", "sg-0other"]
    assert [c.address for c in still_claimed(claims, adopted)] == [
        'module.workers["m5-large-a-ondemand"].aws_autoscaling_group.this',
        "module.control_plane.aws_ebs_volume.etcd[1]",
        "aws_lb_target_group.ingress",
        "aws_security_group.nodes",
        "aws_security_group_rule.nodes_from_lb",  # the group's rule goes with it
    ]
    assert still_claimed(claims, ["sg-0other", "ami-0data"]) == []


def test_a_route_is_matched_by_its_table_and_destination_as_pulumi_imports_it() -> None:
    """Terraform's id of a route (``r-<table><hash>``) is nowhere else; kubeshift imports
    it as ``<table>_<destination>``."""
    route = _instance(
        "us-east-1a", id="r-rtb-0priv1080289494", route_table_id="rtb-0priv",
        destination_cidr_block="0.0.0.0/0",
    )  # fmt: skip
    state = {**STATE, "resources": [_resource("module.vpc", "managed", "aws_route", "nat", route)]}
    claims = claims_in(json.dumps(state), "state.tfstate")
    assert [c.address for c in still_claimed(claims, ["rtb-0priv_0.0.0.0/0"])] == [
        'module.vpc.aws_route.nat["us-east-1a"]'
    ]
    assert still_claimed(claims, ["rtb-0priv_10.0.0.0/8", "rtb-0priv"]) == []


def test_the_release_commands_quote_every_address_for_the_shell() -> None:
    claims = claims_in(json.dumps(STATE), "state.tfstate")
    (command,) = release_commands(claims[:2])
    argv = shlex.split(command)
    assert argv[:3] == ["terraform", "state", "rm"]
    assert argv[3:] == [claims[0].address, claims[1].address]
    many = claims_in(json.dumps({**STATE, "resources": [
        _resource("", "managed", "aws_instance", f"i{n}", _instance(None, id=f"i-{n}"))
        for n in range(45)
    ]}), "big")  # fmt: skip
    assert [len(shlex.split(c)) - 3 for c in release_commands(many)] == [20, 20, 5]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "is not JSON"),
        (json.dumps({"version": 3, "modules": []}), "format version 3"),
        (json.dumps([]), "format version None"),
    ],
)
def test_what_is_not_a_v4_state_is_one_sentence(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as refused:
        claims_in(text, "old.tfstate")
    assert "old.tfstate" in str(refused.value) and "\n" not in str(refused.value)


def test_a_state_is_read_from_a_file_or_from_s3(moto: MotoServer, tmp_path: Path) -> None:
    s3 = moto.client("s3")
    s3.create_bucket(
        Bucket="acme-terraform", CreateBucketConfiguration={"LocationConstraint": moto.region}
    )
    s3.put_object(Bucket="acme-terraform", Key="k8s/prod.tfstate", Body=json.dumps(STATE).encode())
    local = tmp_path / "prod.tfstate"
    local.write_text(json.dumps(STATE))
    from_s3 = state_claims("s3://acme-terraform/k8s/prod.tfstate", s3)
    assert from_s3 == state_claims(str(local), s3) and len(from_s3) == 6
    with pytest.raises(ConfigError, match=r"could not be read \(NoSuchKey\)"):
        state_claims("s3://acme-terraform/k8s/missing.tfstate", s3)
    with pytest.raises(ConfigError, match="names no object"):
        state_claims("s3://acme-terraform", s3)
    with pytest.raises(ConfigError, match="is not a file"):
        state_claims(str(tmp_path / "nowhere.tfstate"), s3)

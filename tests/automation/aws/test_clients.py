"""AwsClients: one place, lazy clients, standard retries, endpoint from env or settings."""

from __future__ import annotations

import pytest

from automation.aws.clients import AwsAccess, AwsClients, botocore_config
from automation.core.errors import UserError
from tests.support.moto_fixtures import MotoServer


@pytest.mark.moto
def test_clients_reach_the_emulator_through_aws_endpoint_url(moto: MotoServer) -> None:
    clients = AwsClients(AwsAccess(region=moto.region))
    assert "ec2" not in vars(clients)  # built lazily
    vpcs = clients.ec2.describe_vpcs()["Vpcs"]
    assert vpcs, "moto has a default VPC in every region"
    assert clients.ec2.meta.endpoint_url == moto.endpoint_url
    assert clients.ec2 is clients.ec2  # built once
    assert clients.ec2.meta.config.retries["mode"] == "standard"


@pytest.mark.moto
def test_explicit_endpoint_wins_over_the_environment(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    clients = AwsClients(AwsAccess(region=moto.region, endpoint_url=moto.endpoint_url))
    assert clients.endpoint_url == moto.endpoint_url
    zones = clients.route53.list_hosted_zones()["HostedZones"]
    assert zones == []
    quota = clients.service_quotas.get_service_quota(ServiceCode="vpc", QuotaCode="L-93826ACB")
    assert quota["Quota"]["Value"] == 50.0


def test_config_has_standard_retries_and_timeouts() -> None:
    config = botocore_config(AwsAccess(connect_timeout=2, read_timeout=7, max_attempts=4))
    assert config.retries == {"mode": "standard", "total_max_attempts": 4}
    assert (config.connect_timeout, config.read_timeout) == (2, 7)


def test_missing_region_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pytest.TempPathFactory
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(UserError, match=r"^No AWS region is set; .*AWS_REGION\.$"):
        AwsClients(AwsAccess())


def test_unknown_profile_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(UserError, match=r"^AWS profile 'ghost' is not configured; "):
        AwsClients(AwsAccess(profile="ghost", region="eu-west-1"))


def test_access_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="extra"):
        AwsAccess.model_validate({"regoin": "eu-west-1"})

"""The sandbox's moto Route53, patched where it differs from AWS (``moto_route53``); the
tests' moto server runs with the patches, so the unpatched cases undo them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from botocore.exceptions import ClientError

from automation.sandbox.moto_route53 import creates_refuse_existing_record_sets
from components.contract.loading import load_config
from components.contract.model_base import ConfigError
from tests.components.conftest import stack_values
from tests.support.moto_fixtures import MotoServer
from tests.support.moto_world import make_zone

NAME = "app.example.com"


def _cname(value: str, name: str = NAME) -> dict[str, Any]:
    return {"Name": name, "Type": "CNAME", "TTL": 60, "ResourceRecords": [{"Value": value}]}


def _change(route53: Any, zone: str, *changes: tuple[str, dict[str, Any]]) -> None:
    batch = [{"Action": action, "ResourceRecordSet": rr} for action, rr in changes]
    route53.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": batch})


def _values(route53: Any, zone: str) -> list[tuple[str, str]]:
    listed = route53.list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"]
    return sorted(
        (rr["Name"], ",".join(v["Value"] for v in rr["ResourceRecords"]))
        for rr in listed
        if rr["Type"] == "CNAME"
    )


def _unpatched(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.route53.models import Route53Backend

    patched = Route53Backend.change_resource_record_sets
    monkeypatch.setattr(Route53Backend, "change_resource_record_sets", patched.__wrapped__)


@pytest.mark.moto
def test_the_patch_is_one_wrapper(moto: MotoServer) -> None:
    from moto.route53.models import Route53Backend

    creates_refuse_existing_record_sets()  # the session applied it: a no-op
    wrapped = Route53Backend.change_resource_record_sets.__wrapped__  # type: ignore[attr-defined]
    assert not getattr(wrapped, "_kubeshift_creates", False)


@pytest.mark.moto
def test_creating_a_record_set_that_exists_is_refused_as_on_aws(moto: MotoServer) -> None:
    route53 = moto.client("route53")
    zone = make_zone(route53)
    _change(route53, zone, ("CREATE", _cname("theirs.example.net")))
    with pytest.raises(ClientError) as refused:
        _change(route53, zone, ("CREATE", _cname("ours.example.net")))
    error = refused.value.response["Error"]
    assert error["Code"] == "InvalidChangeBatch"
    assert error["Message"] == (
        "Tried to create resource record set [name='app.example.com.', type='CNAME'] "
        "but it already exists"
    )
    assert _values(route53, zone) == [("app.example.com.", "theirs.example.net")]


@pytest.mark.moto
def test_a_delete_earlier_in_the_batch_frees_the_name_and_a_deleted_record_can_return(
    moto: MotoServer,
) -> None:
    route53 = moto.client("route53")
    zone = make_zone(route53)
    _change(route53, zone, ("CREATE", _cname("old")))
    _change(route53, zone, ("DELETE", _cname("old")), ("CREATE", _cname("new")))
    _change(route53, zone, ("CREATE", _cname("z", "zz.example.com")))  # a later record
    _change(route53, zone, ("DELETE", _cname("new")))
    _change(route53, zone, ("CREATE", _cname("new")))  # unpatched moto: "already exists"
    assert _values(route53, zone) == [("app.example.com.", "new"), ("zz.example.com.", "z")]
    _change(route53, zone, ("DELETE", _cname("new")))
    assert _values(route53, zone) == [("zz.example.com.", "z")]


@pytest.mark.moto
def test_unpatched_moto_doubles_a_record_set_created_twice(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gap itself: should moto close it, the patch can go."""
    _unpatched(monkeypatch)
    route53 = moto.client("route53")
    zone = make_zone(route53)
    _change(route53, zone, ("CREATE", _cname("theirs.example.net")))
    _change(route53, zone, ("CREATE", _cname("ours.example.net")))
    assert _values(route53, zone) == [
        ("app.example.com.", "ours.example.net"),
        ("app.example.com.", "theirs.example.net"),
    ]


@pytest.mark.moto
def test_unpatched_moto_refuses_to_recreate_a_deleted_record_before_a_later_one(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unpatched(monkeypatch)
    route53 = moto.client("route53")
    zone = make_zone(route53)
    _change(route53, zone, ("CREATE", _cname("new")))
    _change(route53, zone, ("CREATE", _cname("z", "zz.example.com")))
    _change(route53, zone, ("DELETE", _cname("new")))
    with pytest.raises(ClientError, match="already exists"):
        _change(route53, zone, ("CREATE", _cname("new")))
    assert _values(route53, zone) == [("zz.example.com.", "z")]


def _zone_ids(moto: MotoServer, count: int) -> list[str]:
    route53 = moto.client("route53")
    return [
        route53.create_hosted_zone(Name=f"z{i}.example.com", CallerReference=f"z{i}")["HostedZone"][
            "Id"
        ]
        for i in range(count)
    ]


def _checked(zone_id: str) -> str:
    """The stack check's verdict on ``zone_id``: '' when it passes, else its message."""
    values = copy.deepcopy(stack_values("vpc-move-small"))
    values["kubeshift:cluster"]["dns"]["zone_id"] = zone_id
    try:
        load_config(values)
    except ConfigError as refused:
        return str(refused)
    return ""


@pytest.mark.moto
def test_a_zone_made_by_the_sandboxs_moto_passes_the_stack_check(moto: MotoServer) -> None:
    """30 zones: moto's own ids would start with Z about once in 36."""
    ids = _zone_ids(moto, 30)
    assert [i for i in ids if not i.startswith("/hostedzone/Z")] == []
    assert {_checked(i) for i in ids} | {_checked(i.rsplit("/", 1)[-1]) for i in ids} == {""}


@pytest.mark.moto
def test_unpatched_moto_issues_zone_ids_the_stack_check_refuses(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.route53.models import HostedZoneIdentifier

    patched = HostedZoneIdentifier.generate
    monkeypatch.setattr(HostedZoneIdentifier, "generate", patched.__wrapped__)
    refused = [_checked(i) for i in _zone_ids(moto, 30) if _checked(i)]
    assert refused and "is not a Route53 hosted zone id" in refused[0]


def test_the_sandboxs_moto_closes_the_route53_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    """``close_every_gap`` (what the supervisor runs before moto serves) applies them."""
    import importlib
    import pkgutil

    from automation.sandbox import moto_gaps, moto_route53

    closed: list[str] = []
    modules = [moto_gaps] + [  # where a gap is defined or called
        importlib.import_module(m.name)
        for m in pkgutil.iter_modules(moto_gaps.__path__, f"{moto_gaps.__name__}.")
    ]
    for module in modules:
        own = [
            name
            for name, value in vars(module).items()
            if callable(value) and getattr(value, "__module__", "").startswith(moto_gaps.__name__)
        ]
        for name in set(own) - {"close_every_gap"}:  # the other patches: not applied here
            monkeypatch.setattr(module, name, lambda: None)
    monkeypatch.setattr(moto_route53, "close_route53_gaps", lambda: closed.append("route53"))
    moto_gaps.close_every_gap()
    assert closed == ["route53"]


def _a(address: str, name: str = NAME) -> dict[str, Any]:
    return {"Name": name, "Type": "A", "TTL": 60, "ResourceRecords": [{"Value": address}]}


@pytest.mark.moto
def test_a_cname_beside_another_record_of_its_name_is_refused_as_on_aws(
    moto: MotoServer,
) -> None:
    route53 = moto.client("route53")
    zone = make_zone(route53)
    _change(route53, zone, ("CREATE", _a("10.0.0.1")))
    for changes in (
        [("CREATE", _cname("lb.example.net"))],  # beside the A
        [("CREATE", _cname("lb.example.net")), ("DELETE", _a("10.0.0.1"))],  # created first
    ):
        with pytest.raises(ClientError) as refused:
            _change(route53, zone, *changes)
        assert refused.value.response["Error"]["Code"] == "InvalidChangeBatch"
        assert "RRSet of type CNAME with DNS name app.example.com." in str(refused.value)
    # the A deleted first in the batch, the CNAME takes the name; then no A beside it
    _change(route53, zone, ("DELETE", _a("10.0.0.1")), ("CREATE", _cname("lb.example.net")))
    assert _values(route53, zone) == [("app.example.com.", "lb.example.net")]
    with pytest.raises(ClientError) as beside:
        _change(route53, zone, ("UPSERT", _a("10.0.0.2")))
    assert "conflicting RRSet of type CNAME" in str(beside.value)


@pytest.mark.moto
def test_unpatched_moto_keeps_a_cname_beside_an_a_record(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unpatched(monkeypatch)
    route53 = moto.client("route53")
    zone = make_zone(route53)
    _change(route53, zone, ("CREATE", _a("10.0.0.1")), ("CREATE", _cname("lb.example.net")))
    listed = route53.list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"]
    assert {rr["Type"] for rr in listed if rr["Name"] == f"{NAME}."} == {"A", "CNAME"}

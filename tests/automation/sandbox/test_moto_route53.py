"""The sandbox's moto Route53, patched where it differs from AWS (``moto_route53``); the
tests' moto server runs with the patches, so the unpatched cases undo them."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from automation.sandbox.moto_route53 import creates_refuse_existing_record_sets
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

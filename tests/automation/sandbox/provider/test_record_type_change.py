"""The API record's whole control-plane sequence, replayed through the stand-in over
moto's Route53 (strict: a CNAME shares its name with nothing) in the order the engine
runs an update, under both ways pulumi-aws may change a record's ``type``: in place
(one change batch) or by a create-first replacement (before
hashicorp/terraform-provider-aws#47105). kubeshift's records never change type, so
the sequence holds under both; a sequence that does change type holds only in place.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import pytest
from pulumi.runtime.proto import provider_pb2

from automation.core.bridge_defaults import DEFAULTS
from automation.review.render import render_program
from automation.sandbox.provider.servicer import AwsProvider, props_of, struct_of
from automation.sandbox.provider.types.route53_records import TYPE_CHANGE_VARIABLE
from tests.components.conftest import by_type, stack_values
from tests.support.moto_fixtures import MotoServer

RECORD = "aws:route53/record:Record"
API = "api.demo.example.internal"
PHASES = (
    "retire-old-workers", "control-plane-1", "control-plane-2", "control-plane-3", "cleanup"
)  # fmt: skip


class Refused(Exception):
    """The stand-in answered with a gRPC error (as the engine would show it)."""


class _Context:
    def abort(self, code: Any, details: str) -> None:
        raise Refused(details)


@dataclass
class Replay:
    """Runs updates as the engine orders them: creates and updates in the program's
    order (a record after those it depends on), a replacement create-first (records are
    never delete-before-replace), every delete last. After each call, the API name must
    still resolve."""

    provider: AwsProvider
    r53: Any
    zone_id: str
    live: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    def _call(self, method: str, request: Any) -> Any:
        answer = getattr(self.provider, method)(request, _Context())
        resolves = self.r53.list_resource_record_sets(
            HostedZoneId=self.zone_id, StartRecordName=API, MaxItems="1"
        )["ResourceRecordSets"]
        assert resolves and resolves[0]["Name"].rstrip(".") == API, f"{API} gone after {method}"
        return answer

    def update_to(self, records: dict[str, dict[str, Any]]) -> None:
        doomed: list[tuple[str, str, dict[str, Any]]] = []
        for name, declared in records.items():
            urn = f"urn:pulumi:demo::kubeshift::{RECORD}::{name}"
            check = provider_pb2.CheckRequest(urn=urn, news=struct_of(declared))
            news = props_of(self.provider.Check(check, _Context()).inputs)
            if name not in self.live:
                made = self._call(
                    "Create", provider_pb2.CreateRequest(urn=urn, properties=struct_of(news))
                )
                self.live[name] = (made.id, {**props_of(made.properties), DEFAULTS: news[DEFAULTS]})
                continue
            id_, olds = self.live[name]
            diff = provider_pb2.DiffRequest(
                urn=urn,
                id=id_,
                olds=struct_of(olds),
                news=struct_of(news),
                old_inputs=struct_of(olds),
            )
            verdict = self.provider.Diff(diff, _Context())
            if verdict.changes != provider_pb2.DiffResponse.DIFF_SOME:
                continue
            if list(verdict.replaces):
                assert not verdict.deleteBeforeReplace
                made = self._call(
                    "Create", provider_pb2.CreateRequest(urn=urn, properties=struct_of(news))
                )
                doomed.append((urn, id_, olds))
                self.live[name] = (made.id, props_of(made.properties))
            else:
                update = provider_pb2.UpdateRequest(
                    urn=urn, id=id_, olds=struct_of(olds), news=struct_of(news)
                )
                self.live[name] = (id_, props_of(self._call("Update", update).properties))
        for name in [n for n in self.live if n not in records]:
            id_, olds = self.live.pop(name)
            doomed.append((f"urn:pulumi:demo::kubeshift::{RECORD}::{name}", id_, olds))
        for urn, id_, olds in reversed(doomed):
            request = provider_pb2.DeleteRequest(urn=urn, id=id_, properties=struct_of(olds))
            self._call("Delete", request)


@pytest.fixture
def replay(moto: MotoServer) -> Replay:
    provider = AwsProvider()
    configure = provider_pb2.ConfigureRequest(args=struct_of({"region": moto.region}))
    provider.Configure(configure, _Context())
    r53 = moto.client("route53")
    zone = r53.create_hosted_zone(Name="demo.example.internal", CallerReference="replay")
    return Replay(provider, r53, zone["HostedZone"]["Id"].rsplit("/", 1)[-1])


@functools.cache
def _rendered(phase: str, alias: bool) -> tuple[tuple[str, Any], ...]:
    values = stack_values("vpc-move-small")
    values["kubeshift:cluster"]["dns"]["api_alias"] = alias
    resources = by_type(render_program(values, phase).resources, RECORD)
    return tuple((r.name, r.inputs) for r in resources)


def _declared(phase: str, zone_id: str, alias: bool) -> dict[str, dict[str, Any]]:
    """The records the vpc-move program declares at ``phase`` for ``vpc-move-small``
    (a CNAME API record, or kops's alias A record), in its order, in the test's zone."""
    return {name: {**inputs, "zoneId": zone_id} for name, inputs in _rendered(phase, alias)}


@pytest.mark.parametrize("alias", [False, True], ids=["cname", "alias"])
@pytest.mark.parametrize("how", ["in-place", "replace"])
def test_the_api_record_moves_through_every_control_plane_phase(
    replay: Replay, how: str, alias: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TYPE_CHANGE_VARIABLE, how)
    types = set()
    for phase in PHASES:
        records = _declared(phase, replay.zone_id, alias)
        replay.update_to(records)
        types |= {r["type"] for r in records.values() if r["name"] == API}
        live = replay.r53.list_resource_record_sets(HostedZoneId=replay.zone_id)
        held = {(s["Name"].rstrip("."), s["Type"]) for s in live["ResourceRecordSets"]}
        assert held >= {(r["name"], r["type"]) for r in records.values()}, phase
    # never another type, so never a replacement to order
    assert types == ({"A"} if alias else {"CNAME"})


@pytest.mark.parametrize(("how", "holds"), [("in-place", True), ("replace", False)])
def test_a_record_that_changes_type_moves_only_in_place(
    replay: Replay, how: str, holds: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sequence kubeshift ran before (CNAME, then an A record to the member, then a
    CNAME): a create-first replacement makes the A record while the CNAME holds the
    name, which Route53 refuses."""
    monkeypatch.setenv(TYPE_CHANGE_VARIABLE, how)
    base = {"zoneId": replay.zone_id, "name": API, "ttl": 60}
    replay.update_to({"api": {**base, "type": "CNAME", "records": ["demo-api.elb.aws"]}})
    to_member = {"api": {**base, "type": "A", "records": ["10.20.0.10"]}}
    if holds:
        replay.update_to(to_member)
        replay.update_to({"api": {**base, "type": "CNAME", "records": ["demo-api-mig.elb.aws"]}})
    else:
        with pytest.raises(Refused, match="InvalidChangeBatch"):
            replay.update_to(to_member)

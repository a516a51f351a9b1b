"""The stand-in's gRPC answers where a preview leaves a value unknown."""

from __future__ import annotations

from typing import Any

from pulumi.runtime import rpc
from pulumi.runtime.proto import provider_pb2

from automation.sandbox.provider.diffing import contains_unknown
from automation.sandbox.provider.servicer import AwsProvider, props_of, struct_of

LB = "urn:pulumi:s::kubeshift::aws:lb/loadBalancer:LoadBalancer::api"
DECLARED: dict[str, Any] = {
    "name": "api",
    "internal": True,
    "loadBalancerType": "network",
    "subnets": ["subnet-1", "subnet-2"],
    "securityGroups": ["sg-1"],
}


def test_an_unknown_off_the_wire_is_the_sentinel_the_stand_in_tests_for() -> None:
    props = props_of(struct_of({"securityGroups": [rpc.UNKNOWN, "sg-2"], "id": rpc.UNKNOWN}))
    assert props == {"securityGroups": [rpc.UNKNOWN, "sg-2"], "id": rpc.UNKNOWN}
    assert contains_unknown(props["securityGroups"])


def test_a_set_whose_members_are_unknown_until_the_update_differs_in_place() -> None:
    """A group the preview would replace leaves the balancer's ``securityGroups``
    unknown: the answer is an in-place change of that set, not a failed call."""
    olds = struct_of(DECLARED)
    news = struct_of({**DECLARED, "securityGroups": [rpc.UNKNOWN]})
    request = provider_pb2.DiffRequest(urn=LB, id="arn", olds=olds, news=news, old_inputs=olds)
    answer = AwsProvider().Diff(request, context=None)
    assert answer.changes == provider_pb2.DiffResponse.DIFF_SOME
    assert list(answer.diffs) == ["securityGroups"] and list(answer.replaces) == []

"""What adoption adds beside what runs, rather than refuse as missing.

A cluster another tool built lacks some of what kubeshift's baseline declares and
changes nothing that runs by being there: kubeshift's own ingress load balancer in front
of the workers' node ports (kops exposes its ingress through a ``LoadBalancer`` Service
instead) and the rules that admit the load balancers' clients. Adoption's update
creates these beside the imports, each listed in the plan before anything changes; the
rest of what nothing matches stays a problem, and adoption imports nothing.

What may be added, and why it changes nothing running:

- a rule of a security group: it only admits more (kubeshift declares no deny);
- the ingress load balancer's security group (its logical name ends ``-sg-ingress-lb``),
  and a load balancer in it: no record points at a balancer that did not exist;
- a target group, or a listener a live balancer lacks: a new port or a new group of
  targets, which no client uses yet;
- an attachment to a target group adoption adds (to a live one it would send live
  traffic to the group's instances, so that one stays a problem);
- a record that does not exist yet, pointing at a balancer adoption adds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ADDED = "kubeshift-added:"
"""Marks the id, and what dependents read, of a resource adoption adds."""

INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS_RULE = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
LOAD_BALANCER = "aws:lb/loadBalancer:LoadBalancer"
TARGET_GROUP = "aws:lb/targetGroup:TargetGroup"
LISTENER = "aws:lb/listener:Listener"
ATTACHMENT = "aws:autoscaling/attachment:Attachment"
RECORD = "aws:route53/record:Record"

ADDABLE_GROUPS = ("-sg-ingress-lb",)
"""How the logical names of the security groups adoption may add end: only the ingress
load balancer's (its role tag is not declared where ``own_tags`` is false)."""

_ALWAYS = frozenset({INGRESS_RULE, EGRESS_RULE, TARGET_GROUP, LISTENER})
"""Added wherever nothing matches them (see the module docstring)."""
_WITH_ADDED = frozenset({LOAD_BALANCER, ATTACHMENT, RECORD, *_ALWAYS})
"""Added when nothing matches them and they refer to something adoption adds."""
_LOOKED_UP_ALL_THE_SAME = frozenset({LOAD_BALANCER, RECORD, TARGET_GROUP})
"""Found by their own name, whatever they refer to: one may run already."""


def holds_mark(value: Any, mark: str) -> bool:
    """Whether ``value`` (an input, however nested) holds an id or ARN discovery marked
    with ``mark`` (what an addition, or something not found, stands for)."""
    if isinstance(value, str):
        return value.startswith(mark) or f"/{mark}" in value
    if isinstance(value, Mapping):
        return any(holds_mark(v, mark) for v in value.values())
    if isinstance(value, list):
        return any(holds_mark(v, mark) for v in value)
    return False


def refers_to_added(value: Any) -> bool:
    """Whether ``value`` holds what an addition stands for."""
    return holds_mark(value, ADDED)


def looked_up(typ: str, inputs: Mapping[str, Any]) -> bool:
    """Whether to look for the live resource at all: not when it refers to an addition
    and can only be found through it (a rule of a new group, a new balancer's listener)."""
    return not refers_to_added(inputs) or typ in _LOOKED_UP_ALL_THE_SAME


def addable(typ: str, name: str, inputs: Mapping[str, Any]) -> bool:
    """Whether a declared resource nothing live matches may be added (module docstring)."""
    if typ in _ALWAYS:
        return True
    if typ == SECURITY_GROUP:
        return name.endswith(ADDABLE_GROUPS)
    return typ in _WITH_ADDED and refers_to_added(inputs)

"""``aws:autoscaling`` auto scaling groups (``aws:autoscaling/group:Group``).

``force_new`` is what the Terraform AWS provider's schema marks ``ForceNew``
(``internal/service/autoscaling/group.go``): the group's ``name``/``name_prefix``/
``initial_lifecycle_hook``. Everything else a group declares changes in place.

As Terraform does, a create waits until the desired capacity is ``InService`` and a
delete scales the group to zero, force-deletes it and waits until its instances are
terminated; moto launches and terminates instances at once, so every wait ends at its
first poll. moto tags the instances it launches with the group's propagated tags, which
is what turns them into cluster nodes in the sandbox.

moto gaps: UpdateAutoScalingGroup ignores ``CapacityRebalance``, ``TerminationPolicies``
and ``PlacementGroup`` (CreateAutoScalingGroup keeps them) and drops a mixed
instances policy it is not given (so updates always send the declared one), and
instances launched for a mixed instances policy get the launch template's instance
type, not the overrides' (none, for the program's worker templates).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    COMPUTED_ONLY,
    NAME_PREFIX,
    REGION,
    TERRAFORM_ONLY,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.autoscaling_calls import (
    TIMEOUT,
    Raw,
    code_and_message,
    describe_group,
    retry,
    wait,
    wait_capacity,
)

_GROUP_GO = "internal/service/autoscaling/group.go"
_PROPAGATION = 120.0  # Terraform's retry window for IAM eventual consistency
_GROUP_TYPE = "auto-scaling-group"
_GRANULARITY = "1Minute"  # the only one AWS offers
_UNSERVED = (
    "launchConfiguration",
    "loadBalancers",
    "targetGroupArns",
    "initialLifecycleHooks",
    "warmPool",
    "instanceRefresh",
)


# --- property shapes ------------------------------------------------------------------


def _api(value: Any) -> Any:
    """Engine shape -> API shape: ``onDemandBaseCapacity`` -> ``OnDemandBaseCapacity``;
    numbers (doubles on the wire) -> ``int``."""
    if isinstance(value, dict):
        return {k[:1].upper() + k[1:]: _api(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_api(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _engine(value: Any) -> Any:
    """API shape -> engine shape (the reverse of :func:`_api`)."""
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: _engine(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_engine(v) for v in value]
    return value


def _covers(live: Any, declared: Any) -> bool:
    """Whether ``live`` already holds every value ``declared`` sets (AWS fills in the
    fields a declaration leaves out, as Terraform's Optional+Computed ones)."""
    if declared is None:
        return True
    if isinstance(declared, dict):
        return isinstance(live, dict) and all(_covers(live.get(k), v) for k, v in declared.items())
    if isinstance(declared, list):
        return (
            isinstance(live, list)
            and len(live) == len(declared)
            and all(map(_covers, live, declared))
        )
    return bool(live == declared)


def launch_argument(props: Props) -> Raw:
    """The declared ``LaunchTemplate`` or ``MixedInstancesPolicy`` argument."""
    if lt := props.get("launchTemplate"):
        spec = (
            {"LaunchTemplateId": lt["id"]} if lt.get("id") else {"LaunchTemplateName": lt["name"]}
        )
        return {
            "LaunchTemplate": {
                **spec,
                **({"Version": str(lt["version"])} if lt.get("version") else {}),
            }
        }
    return {"MixedInstancesPolicy": _api(props["mixedInstancesPolicy"])}


def _tag(group: str, tag: Props) -> Raw:
    return {
        "ResourceId": group,
        "ResourceType": _GROUP_TYPE,
        "Key": tag["key"],
        "Value": tag["value"],
        "PropagateAtLaunch": bool(tag.get("propagateAtLaunch")),
    }


# Declared settings CreateAutoScalingGroup/UpdateAutoScalingGroup take as they are.
_SETTINGS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "minSize": ("MinSize", int),
    "maxSize": ("MaxSize", int),
    "desiredCapacity": ("DesiredCapacity", int),
    "capacityRebalance": ("CapacityRebalance", bool),
    "defaultCooldown": ("DefaultCooldown", int),
    "healthCheckGracePeriod": ("HealthCheckGracePeriod", int),
    "healthCheckType": ("HealthCheckType", str),
    "vpcZoneIdentifiers": ("VPCZoneIdentifier", ",".join),
    "placementGroup": ("PlacementGroup", str),
    "protectFromScaleIn": ("NewInstancesProtectedFromScaleIn", bool),
    "terminationPolicies": ("TerminationPolicies", list),
}
_DEFAULT_TERMINATION = ["Default"]  # what AWS reports for a group given no policies
_SETS = ("vpcZoneIdentifiers",)  # compared as sets (Terraform TypeSet)


def _settings(props: Props, names: list[str] | None = None) -> Raw:
    """The API arguments for the declared settings (all, or just ``names``)."""
    return {
        api: cast(props[p])
        for p, (api, cast) in _SETTINGS.items()
        if (names is None or p in names) and props.get(p) not in (None, [])
    }


def _setting_changed(prop: str, olds: Props, news: Props) -> bool:
    if news.get(prop) in (None, []):  # Optional+Computed: left out means "keep"
        return False
    if prop in _SETS:
        return set(olds.get(prop) or []) != set(news[prop])
    return not _covers(olds.get(prop), news[prop])


# --- aws:autoscaling/group:Group ------------------------------------------------------


@register
class Group(ResourceType):
    """An auto scaling group; id = its name.

    The program declares a launch template (control plane) or a mixed instances policy
    (workers); ``targetGroupArns`` are left to :class:`Attachment` resources.
    """

    token = "aws:autoscaling/group:Group"
    not_read = {
        **dict.fromkeys(
            ("availabilityZoneDistribution", "capacityReservationSpecification", "context",
             "defaultInstanceWarmup", "desiredCapacityType", "instanceLifecyclePolicy",
             "instanceMaintenancePolicy", "maxInstanceLifetime", "trafficSources"),
            "moto drops it (CreateAutoScalingGroup accepts it, DescribeAutoScalingGroups "
            "leaves it out): a live value would show on a real import only",
        ),
        **dict.fromkeys(
            ("forceDelete", "forceDeleteWarmPool", "ignoreFailedScalingActivities",
             "minElbCapacity", "waitForCapacityTimeout", "waitForElbCapacity"),
            TERRAFORM_ONLY,
        ),
        **dict.fromkeys(
            ("initialLifecycleHooks", "instanceRefresh", "launchConfiguration", "warmPool"),
            "refused by the stand-in's check (the program declares none)",
        ),
        "predictedCapacity": COMPUTED_ONLY,
        "warmPoolSize": COMPUTED_ONLY,
        "namePrefix": NAME_PREFIX,
        "region": REGION,
    }  # fmt: skip
    auto_named = "name"  # pulumi-aws autonames it: set here, replacements delete first
    force_new = (
        ForceNew("name", f"{_GROUP_GO}: name ForceNew"),
        ForceNew("namePrefix", f"{_GROUP_GO}: name_prefix ForceNew"),
        ForceNew("initialLifecycleHooks", f"{_GROUP_GO}: initial_lifecycle_hook ForceNew"),
    )
    computed = (
        "arn",
        "availabilityZones",
        "defaultCooldown",
        "loadBalancers",
        "serviceLinkedRoleArn",
        "targetGroupArns",
    )
    optional_computed = (
        "availabilityZones",
        "defaultCooldown",
        "launchTemplate.name",
        "launchTemplate.id",
        "mixedInstancesPolicy.launchTemplate.launchTemplateSpecification.launchTemplateName",
        "mixedInstancesPolicy.launchTemplate.launchTemplateSpecification.launchTemplateId",
        "mixedInstancesPolicy.instancesDistribution.onDemandAllocationStrategy",
        "mixedInstancesPolicy.instancesDistribution.spotInstancePools",
    )
    defaults = {"capacityRebalance": False, "protectFromScaleIn": False}

    def check(self, req: Request, news: Props) -> Props:
        for prop in _UNSERVED:
            if news.get(prop):
                raise ValueError(f"{prop} is not served by the sandbox's auto scaling groups")
        if bool(news.get("launchTemplate")) == bool(news.get("mixedInstancesPolicy")):
            raise ValueError("set exactly one of launchTemplate and mixedInstancesPolicy")
        # Terraform's defaults
        props = {
            "healthCheckGracePeriod": 300, "metricsGranularity": _GRANULARITY,
            **copy.deepcopy(news),
        }  # fmt: skip
        if policy := props.get("mixedInstancesPolicy"):
            template = policy["launchTemplate"]
            specs = [template["launchTemplateSpecification"]] + [
                o["launchTemplateSpecification"]
                for o in template.get("overrides") or []
                if o.get("launchTemplateSpecification")
            ]
            for spec in specs:  # Terraform's default version
                spec.setdefault("version", "$Default")
        if not props.get("name"):
            prefix = props.get("namePrefix") or f"{req.name}-"
            props["name"] = prefix + hashlib.sha256(req.name.encode()).hexdigest()[:7]
        if len(props["name"]) > 255:
            raise ValueError(f"name {props['name']!r} is longer than 255 characters")
        return props

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        asg = aws.client("autoscaling")
        name = inputs["name"]
        args: Raw = {"AutoScalingGroupName": name, **launch_argument(inputs), **_settings(inputs)}
        if inputs.get("tags"):
            args["Tags"] = [_tag(name, t) for t in inputs["tags"]]
        # A launch template's instance profile may not be visible to Auto Scaling yet.
        retry(
            lambda: asg.create_auto_scaling_group(**args),
            lambda code, message: "Invalid IAM Instance Profile" in message,
            _PROPAGATION,
        )
        wait_capacity(aws, name)
        _collect_metrics(aws, name, [], inputs)
        if inputs.get("suspendedProcesses"):
            asg.suspend_processes(
                AutoScalingGroupName=name, ScalingProcesses=list(inputs["suspendedProcesses"])
            )
        return name, self.read(aws, req, name, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        g = describe_group(aws, id_)
        tags = [
            {
                "key": t["Key"],
                "value": t["Value"],
                "propagateAtLaunch": bool(t["PropagateAtLaunch"]),
            }
            for t in sorted(g.get("Tags") or [], key=lambda t: t["Key"])
            if not t["Key"].startswith("aws:")
        ]
        subnets = [s for s in (g.get("VPCZoneIdentifier") or "").split(",") if s]
        suspended = sorted(p["ProcessName"] for p in g.get("SuspendedProcesses") or [])
        metrics = g.get("EnabledMetrics") or []
        outputs: Props = {
            "arn": g["AutoScalingGroupARN"],
            "name": g["AutoScalingGroupName"],
            "minSize": g["MinSize"],
            "maxSize": g["MaxSize"],
            "desiredCapacity": g["DesiredCapacity"],
            "capacityRebalance": bool(g.get("CapacityRebalance")),
            "defaultCooldown": g.get("DefaultCooldown", 300),
            "healthCheckGracePeriod": g.get("HealthCheckGracePeriod", 0),
            "healthCheckType": g.get("HealthCheckType", "EC2"),
            "availabilityZones": sorted(g.get("AvailabilityZones") or []),
            "vpcZoneIdentifiers": subnets,
            "suspendedProcesses": suspended,
            "enabledMetrics": sorted(m["Metric"] for m in metrics),
            "metricsGranularity": next((m["Granularity"] for m in metrics), _GRANULARITY),
            "tags": tags,
            "loadBalancers": sorted(g.get("LoadBalancerNames") or []),
            "targetGroupArns": sorted(g.get("TargetGroupARNs") or []),
            "protectFromScaleIn": bool(g.get("NewInstancesProtectedFromScaleIn")),
        }
        if policies := _termination_policies(g, state):
            outputs["terminationPolicies"] = policies
        if placement := g.get("PlacementGroup"):
            outputs["placementGroup"] = placement
        if role := g.get("ServiceLinkedRoleARN"):
            outputs["serviceLinkedRoleArn"] = role
        if lt := g.get("LaunchTemplate"):
            outputs["launchTemplate"] = {
                "id": lt["LaunchTemplateId"],
                "name": lt["LaunchTemplateName"],
                **({"version": lt["Version"]} if lt.get("Version") else {}),
            }
        if policy := g.get("MixedInstancesPolicy"):
            outputs["mixedInstancesPolicy"] = _engine(policy)
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        asg = aws.client("autoscaling")
        self._retag(aws, id_, olds, news)
        changed = [p for p in _SETTINGS if _setting_changed(p, olds, news)]
        launch = [p for p in ("launchTemplate", "mixedInstancesPolicy") if p in news]
        if changed or any(not _covers(olds.get(p), news[p]) for p in launch):
            # The declared launch template/policy goes with every update: unchanged it is
            # a no-op on AWS, and moto drops a mixed instances policy an update leaves out.
            asg.update_auto_scaling_group(
                AutoScalingGroupName=id_, **launch_argument(news), **_settings(news, changed)
            )
        if {"desiredCapacity", "minSize"} & set(changed):
            wait_capacity(aws, id_)
        _collect_metrics(aws, id_, olds.get("enabledMetrics") or [], news)
        old, new = (
            set(olds.get("suspendedProcesses") or []),
            set(news.get("suspendedProcesses") or []),
        )
        # An empty ScalingProcesses list means every process, so never send one.
        if resume := sorted(old - new):
            asg.resume_processes(AutoScalingGroupName=id_, ScalingProcesses=resume)
        if suspend := sorted(new - old):
            asg.suspend_processes(AutoScalingGroupName=id_, ScalingProcesses=suspend)
        return self.read(aws, req, id_, news)

    @staticmethod
    def _retag(aws: Aws, id_: str, olds: Props, news: Props) -> None:
        asg = aws.client("autoscaling")
        old = {t["key"]: _tag(id_, t) for t in olds.get("tags") or []}
        new = {t["key"]: _tag(id_, t) for t in news.get("tags") or []}
        if removed := [tag for key, tag in old.items() if key not in new]:
            asg.delete_tags(Tags=removed)
        if changed := [tag for key, tag in new.items() if old.get(key) != tag]:
            asg.create_or_update_tags(Tags=changed)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        asg = aws.client("autoscaling")
        try:
            group = describe_group(aws, id_)
        except NotFound:
            return
        instances = [i["InstanceId"] for i in group["Instances"]]
        if instances or group["DesiredCapacity"]:  # drain, so lifecycle hooks still run
            asg.update_auto_scaling_group(
                AutoScalingGroupName=id_, MinSize=0, MaxSize=0, DesiredCapacity=0
            )

        def force_delete() -> None:
            try:
                asg.delete_auto_scaling_group(AutoScalingGroupName=id_, ForceDelete=True)
            except ClientError as err:
                code, message = code_and_message(err)
                if not (code == "ValidationError" and "not found" in message):
                    raise

        retry(
            force_delete,
            lambda code, _: code in ("ResourceInUse", "ScalingActivityInProgress"),
            TIMEOUT,
        )
        wait(lambda: self._exists(aws, id_), lambda there: not there, f"deleting {id_}")
        if instances:
            wait(
                lambda: _live_instances(aws, instances),
                lambda live: not live,
                f"instances of {id_} terminating",
            )

    @staticmethod
    def _exists(aws: Aws, id_: str) -> bool:
        try:
            describe_group(aws, id_)
        except NotFound:
            return False
        return True


def _termination_policies(group: Raw, state: Props) -> list[str]:
    """The group's termination policies, but AWS's lone ``Default`` when the state sets
    none: Terraform's read clears it then (``group.go``: "If no termination polices are
    explicitly configured and the upstream state is only using the "Default" policy,
    clear the state"), so only a policy someone chose shows on import."""
    policies = list(group.get("TerminationPolicies") or [])
    if policies == _DEFAULT_TERMINATION and not state.get("terminationPolicies"):
        return []
    return policies


def _collect_metrics(aws: Aws, name: str, collected: list[str], news: Props) -> None:
    """Collect the declared metrics (``enabledMetrics``, at ``metricsGranularity``) and
    stop those ``collected`` that are no longer declared."""
    asg = aws.client("autoscaling")
    wanted = set(news.get("enabledMetrics") or [])
    if dropped := sorted(set(collected) - wanted):
        asg.disable_metrics_collection(AutoScalingGroupName=name, Metrics=dropped)
    if added := sorted(wanted - set(collected)):
        asg.enable_metrics_collection(
            AutoScalingGroupName=name, Metrics=added,
            Granularity=news.get("metricsGranularity") or _GRANULARITY,
        )  # fmt: skip


def _live_instances(aws: Aws, ids: list[str]) -> list[str]:
    """Those of ``ids`` not yet terminated."""
    try:
        pages = aws.ec2.get_paginator("describe_instances").paginate(InstanceIds=ids)
        return [
            i["InstanceId"]
            for page in pages
            for r in page["Reservations"]
            for i in r["Instances"]
            if i["State"]["Name"] != "terminated"
        ]
    except ClientError as err:
        if code_and_message(err)[0] == "InvalidInstanceID.NotFound":  # all long gone
            return []
        raise

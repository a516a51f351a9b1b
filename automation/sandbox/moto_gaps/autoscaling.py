"""Auto Scaling's gaps between the sandbox's moto and AWS: how a group spreads its
instances, collects its metrics and sets its health-check grace period, each closed
by patching moto's in-process model (applied by ``moto_gaps.close_every_gap``; each
has a line in ``docs/sandbox-fidelity.md``).

- **A group spreads its instances over its AZs and instance types.** AWS balances a
  group's instances across the AZs of its subnets and launches a mixed instances
  policy's override types (on-demand: the first, by priority; spot: among them all).
  moto launches every instance in the group's first subnet with the launch template's
  instance type, so a kops instance group spanning zones would put all its nodes in one.
- **A group's metrics are collected until disabled.** AWS's ``EnableMetricsCollection``
  adds the metrics it names to those a group collects and ``DisableMetricsCollection``
  stops them; moto replaces the set on enable and has no disable, so an update that
  drops one of kops's metrics from a group fails.
- **A group's health-check grace period defaults to 0.** AWS's
  ``CreateAutoScalingGroup`` keeps the period it is given and 0 when none is (kops gives
  none); moto makes both 0 and none 300, so a kops group would look as if it had been
  given kubeshift's value.
"""

from __future__ import annotations

import functools
import random
from typing import Any


def groups_spread_over_zones_and_types() -> None:
    """Launch each of a group's new instances in its subnet holding the fewest of the
    group's instances, with an override type: the first for an on-demand group, by turns
    for spot. A group of one subnet and no overrides launches as before. The group is
    only read, never altered in passing, so a description answered meanwhile on another
    of moto's threads sees it whole. Idempotent."""
    from moto.autoscaling.models import ASG_NAME_TAG, FakeAutoScalingGroup, InstanceState

    if getattr(FakeAutoScalingGroup.replace_autoscaling_group_instances, "_kubeshift", False):
        return
    original = FakeAutoScalingGroup.replace_autoscaling_group_instances

    @functools.wraps(original)
    def replace(self: Any, count_needed: int, propagated_tags: dict[str, str]) -> None:
        subnets = [s for s in (self.vpc_zone_identifier or "").split(",") if s]
        policy = self.mixed_instances_policy or {}
        types = [
            o["InstanceType"]
            for o in policy.get("LaunchTemplate", {}).get("Overrides", [])
            if o.get("InstanceType")
        ]
        share = policy.get("InstancesDistribution", {}).get(
            "OnDemandPercentageAboveBaseCapacity", 100
        )
        if len(subnets) < 2 and not types:
            original(self, count_needed, propagated_tags)
            return
        tags = {**propagated_tags, ASG_NAME_TAG: self.name, **self.instance_tags}
        template = self.ec2_launch_template  # what moto's own launch passes on
        launched_from = None
        if template is not None:
            launched_from = (
                {"LaunchTemplateId": template.id}
                if template.id
                else {"LaunchTemplateName": template.name}
            )
        for _ in range(count_needed):
            held = [state.instance.subnet_id for state in self.instance_states]
            on_demand = int(share) == 100
            kind = (types[0 if on_demand else len(held) % len(types)]) if types else None
            reservation = self.autoscaling_backend.ec2_backend.run_instances(
                self.image_id,
                1,
                self.user_data,
                self.security_groups,
                instance_type=kind or self.instance_type,
                tags={"instance": dict(tags)},
                placement=random.choice(self.availability_zones),  # as moto's: no subnet
                launch_config=self.launch_config,
                launch_template=launched_from,
                is_instance_type_default=False,
                associate_public_ip=(
                    self.launch_config.associate_public_ip_address if self.launch_config else None
                ),
                subnet_id=min(subnets, key=held.count) if subnets else None,
            )
            for instance in reservation.instances:
                instance.autoscaling_group = self
                self.instance_states.append(
                    InstanceState(
                        instance, protected_from_scale_in=self.new_instances_protected_from_scale_in
                    )
                )

    replace._kubeshift = True  # type: ignore[attr-defined]
    FakeAutoScalingGroup.replace_autoscaling_group_instances = replace  # type: ignore[method-assign]


def metrics_collection_adds_and_disables() -> None:
    """Enable adds to a group's metrics; disable removes those named (all, when none
    is). Idempotent."""
    from moto.autoscaling.models import FakeAutoScalingGroup
    from moto.autoscaling.responses import AutoScalingResponse
    from moto.core.responses import EmptyResult

    if getattr(FakeAutoScalingGroup.enable_metrics_collection, "_kubeshift", False):
        return

    def enable_metrics_collection(self: Any, metrics: list[str]) -> None:
        self.metrics = [*self.metrics, *(m for m in metrics or [] if m not in self.metrics)]

    def disable_metrics_collection(self: Any) -> Any:
        group = self.autoscaling_backend.autoscaling_groups[self._get_param("AutoScalingGroupName")]
        named = self._get_param("Metrics") or []
        group.metrics = [m for m in group.metrics if named and m not in named]
        return EmptyResult()

    enable_metrics_collection._kubeshift = True  # type: ignore[attr-defined]
    FakeAutoScalingGroup.enable_metrics_collection = enable_metrics_collection  # type: ignore[method-assign]
    AutoScalingResponse.disable_metrics_collection = disable_metrics_collection  # type: ignore[attr-defined]


def grace_period_as_given() -> None:
    """A new group's health-check grace period is the one given, 0 when none is.
    Idempotent."""
    from moto.autoscaling.models import AutoScalingBackend

    original = AutoScalingBackend.create_auto_scaling_group
    if getattr(original, "_kubeshift", False):
        return

    @functools.wraps(original)
    def create_auto_scaling_group(self: Any, *args: Any, **kwargs: Any) -> Any:
        group = original(self, *args, **kwargs)
        given = kwargs.get("health_check_period")
        group.health_check_grace_period = int(given) if given is not None else 0
        return group

    create_auto_scaling_group._kubeshift = True  # type: ignore[attr-defined]
    AutoScalingBackend.create_auto_scaling_group = create_auto_scaling_group  # type: ignore[method-assign]


_INCOMPATIBLE_TEMPLATE = (
    "Incompatible launch template: You cannot use a launch template that is set to request "
    "Spot Instances (InstanceMarketOptions) when you configure an Auto Scaling group with a "
    "mixed instances policy. Add a different launch template to the group and try again."
)


def spot_templates_refused_under_mixed_policies() -> None:
    """``InvalidQueryParameter`` creating or updating a group whose mixed-instances policy
    names a template version that asks for the spot market, before the group changes.
    Idempotent."""
    from moto.autoscaling.exceptions import AutoscalingClientError
    from moto.autoscaling.models import FakeAutoScalingGroup

    class IncompatibleLaunchTemplate(AutoscalingClientError):
        code = "InvalidQueryParameter"

    set_launch, update = FakeAutoScalingGroup._set_launch_configuration, FakeAutoScalingGroup.update
    if getattr(set_launch, "_kubeshift", False):
        return

    def refuse_spot_template(group: Any, policy: Any) -> None:
        launch = (policy or {}).get("LaunchTemplate") or {}
        spec = launch.get("LaunchTemplateSpecification") or {}
        template = None
        if spec.get("LaunchTemplateId"):
            template = group.ec2_backend.get_launch_template(spec["LaunchTemplateId"])
        elif spec.get("LaunchTemplateName"):
            template = group.ec2_backend.get_launch_template_by_name(spec["LaunchTemplateName"])
        if template is not None:
            data = template.get_version(spec.get("Version") or "$Default").data
            if (data or {}).get("InstanceMarketOptions"):
                raise IncompatibleLaunchTemplate(_INCOMPATIBLE_TEMPLATE)

    @functools.wraps(set_launch)
    def checked_set_launch(
        self: Any, launch_config_name: Any, launch_template: Any, mixed_instances_policy: Any
    ) -> None:  # a new group: before moto makes it
        refuse_spot_template(self, mixed_instances_policy)
        set_launch(self, launch_config_name, launch_template, mixed_instances_policy)

    @functools.wraps(update)
    def checked_update(self: Any, *args: Any, **kwargs: Any) -> None:
        refuse_spot_template(self, kwargs.get("mixed_instances_policy"))  # before any change
        update(self, *args, **kwargs)

    checked_set_launch._kubeshift = True  # type: ignore[attr-defined]
    FakeAutoScalingGroup._set_launch_configuration = checked_set_launch  # type: ignore[method-assign]
    FakeAutoScalingGroup.update = checked_update  # type: ignore[method-assign]

"""``aws:autoscaling`` target group attachments (``aws:autoscaling/attachment:Attachment``).

``force_new`` is what the Terraform AWS provider's schema marks ``ForceNew``
(``internal/service/autoscaling/attachment.go``): every argument, as an attachment has
no update. Attaching and detaching retry while AWS answers that too many target groups
are being updated at once, as Terraform does.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from automation.sandbox.provider.model import (
    REGION,
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
    describe_group,
    retry,
)

_ATTACHMENT_GO = "internal/service/autoscaling/attachment.go"


@register
class Attachment(ResourceType):
    """A target group attached to an auto scaling group; id = ``<group>-<unique suffix>``
    as Terraform's PrefixedUniqueId makes it."""

    token = "aws:autoscaling/attachment:Attachment"
    not_read = {
        "elb": "a classic load balancer's: the stand-in's check refuses it",
        "region": REGION,
    }
    force_new = (
        ForceNew("autoscalingGroupName", f"{_ATTACHMENT_GO}: autoscaling_group_name ForceNew"),
        ForceNew("lbTargetGroupArn", f"{_ATTACHMENT_GO}: lb_target_group_arn ForceNew"),
        ForceNew("elb", f"{_ATTACHMENT_GO}: elb ForceNew"),
    )
    computed = ()

    def check(self, req: Request, news: Props) -> Props:
        if news.get("elb"):
            raise ValueError("classic load balancers (elb) are not served by the sandbox")
        if not news.get("autoscalingGroupName") or not news.get("lbTargetGroupArn"):
            raise ValueError("autoscalingGroupName and lbTargetGroupArn are required")
        return news

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        group, arn = inputs["autoscalingGroupName"], inputs["lbTargetGroupArn"]
        retry(
            lambda: aws.client("autoscaling").attach_load_balancer_target_groups(
                AutoScalingGroupName=group, TargetGroupARNs=[arn]
            ),
            _too_many,
            TIMEOUT,
        )
        id_ = f"{group}-{datetime.now(UTC):%Y%m%d%H%M%S}{secrets.token_hex(4)}"
        return id_, self.read(aws, req, id_, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        group, arn = state["autoscalingGroupName"], state["lbTargetGroupArn"]
        if arn not in describe_group(aws, group).get("TargetGroupARNs", []):
            raise NotFound(f"{arn} is not attached to {group}")
        return {"autoscalingGroupName": group, "lbTargetGroupArn": arn}

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        try:
            self.read(aws, req, id_, state)
        except NotFound:
            return
        retry(
            lambda: aws.client("autoscaling").detach_load_balancer_target_groups(
                AutoScalingGroupName=state["autoscalingGroupName"],
                TargetGroupARNs=[state["lbTargetGroupArn"]],
            ),
            _too_many,
            TIMEOUT,
        )


def _too_many(code: str, message: str) -> bool:
    """ "Trying to update too many Load Balancers/Target Groups at once" (limit 10)."""
    return code == "ValidationError" and "update too many" in message

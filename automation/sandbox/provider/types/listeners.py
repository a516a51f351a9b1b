"""``aws:lb`` listeners (``aws:lb/listener:Listener``); id = the ARN.

``force_new`` is what the Terraform AWS provider's schema marks ``ForceNew``
(``internal/service/elbv2/listener.go``): the load balancer; port, protocol, TLS
settings and default actions change in place. Only ``forward`` default actions to one
target group (the program's shape) are served.
"""

from __future__ import annotations

from typing import Any

from automation.sandbox.provider.model import (
    OPTIONAL_COMPUTED,
    REGION,
    UNTRIED,
    Aws,
    ForceNew,
    Props,
    Request,
    ResourceType,
    register,
)
from automation.sandbox.provider.types.elbv2_calls import (
    TIMEOUT,
    Raw,
    covers,
    ignore_gone,
    one,
    read_tags,
    retag,
    tag_args,
    wait,
)

_LISTENER_GO = "internal/service/elbv2/listener.go"


def _actions(declared: list[Props]) -> list[Raw]:
    """Declared ``defaultActions`` (forward to one target group) -> API actions."""
    return [
        {
            "Type": "forward",
            "TargetGroupArn": action["targetGroupArn"],
            "Order": int(action.get("order") or i),  # Terraform's default: the position
        }
        for i, action in enumerate(declared, start=1)
    ]


def _action_outputs(live: list[Raw]) -> list[Props]:
    outputs = []
    for action in sorted(live, key=lambda a: a.get("Order", 0)):
        groups = (action.get("ForwardConfig") or {}).get("TargetGroups") or []
        arn = action.get("TargetGroupArn") or (groups[0]["TargetGroupArn"] if groups else None)
        output: Props = {"type": action["Type"], "targetGroupArn": arn}
        if action.get("Order") is not None:
            output["order"] = action["Order"]
        outputs.append({k: v for k, v in output.items() if v is not None})
    return outputs


# An HTTPS listener's header settings (listener attributes ``routing.http.*``), by the
# names pulumi-aws gives them.
_HEADER_SETTINGS = tuple(
    f"routingHttp{name}"
    for name in (
        *(f"RequestXAmznMtlsClientcert{h}HeaderName"
          for h in ("", "Issuer", "Leaf", "SerialNumber", "Subject", "Validity")),
        "RequestXAmznTlsCipherSuiteHeaderName",
        "RequestXAmznTlsVersionHeaderName",
        *(f"ResponseAccessControl{h}HeaderValue"
          for h in ("AllowCredentials", "AllowHeaders", "AllowMethods", "AllowOrigin",
                    "ExposeHeaders", "MaxAge")),
        "ResponseContentSecurityPolicyHeaderValue",
        "ResponseServerEnabled",
        "ResponseStrictTransportSecurityHeaderValue",
        "ResponseXContentTypeOptionsHeaderValue",
        "ResponseXFrameOptionsHeaderValue",
    )
)  # fmt: skip


@register
class Listener(ResourceType):
    """A listener; id = its ARN. Only ``forward`` default actions to one target group
    (the program's shape) are served."""

    token = "aws:lb/listener:Listener"
    not_read = {
        **dict.fromkeys(
            ("alpnPolicy", "mutualAuthentication", *_HEADER_SETTINGS),
            "an HTTPS listener's setting: the program's listeners are TCP; " + UNTRIED,
        ),
        "tcpIdleTimeoutSeconds": OPTIONAL_COMPUTED,
        "region": REGION,
    }  # fmt: skip
    force_new = (ForceNew("loadBalancerArn", f"{_LISTENER_GO}: load_balancer_arn ForceNew"),)
    computed = ("arn", "tagsAll")
    optional_computed = ("defaultActions[].order", "protocol")

    def check(self, req: Request, news: Props) -> Props:
        actions = news.get("defaultActions") or []
        if not actions:
            raise ValueError("defaultActions is required")
        for action in actions:
            if str(action.get("type", "")).lower() != "forward" or not action.get("targetGroupArn"):
                raise ValueError(
                    "the sandbox serves only default actions of type forward with a targetGroupArn"
                )
        props = dict(news)
        if props.get("protocol"):
            props["protocol"] = str(props["protocol"]).upper()
        return props

    @staticmethod
    def _settings(props: Props) -> Raw:
        """What CreateListener and ModifyListener take besides the ARNs."""
        args: Raw = {"DefaultActions": _actions(props["defaultActions"])}
        if props.get("port"):
            args["Port"] = int(props["port"])
        if props.get("protocol"):
            args["Protocol"] = props["protocol"]
        elif "loadbalancer/app/" in props.get("loadBalancerArn", ""):
            args["Protocol"] = "HTTP"  # Terraform's default for ALBs
        if props.get("sslPolicy"):
            args["SslPolicy"] = props["sslPolicy"]
        if props.get("certificateArn"):
            args["Certificates"] = [{"CertificateArn": props["certificateArn"]}]
        return args

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        elb = aws.client("elbv2")
        listener = elb.create_listener(
            LoadBalancerArn=inputs["loadBalancerArn"], **self._settings(inputs), **tag_args(inputs)
        )["Listeners"][0]
        arn = listener["ListenerArn"]
        wait(lambda: self._listener(elb, arn), lambda _: True, f"listener {arn}", TIMEOUT)
        return arn, self.read(aws, req, arn, inputs)

    @staticmethod
    def _listener(elb: Any, arn: str) -> Raw:
        return one(lambda: elb.describe_listeners(ListenerArns=[arn])["Listeners"])

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        elb = aws.client("elbv2")
        listener = self._listener(elb, id_)
        outputs: Props = {
            "arn": id_,
            "loadBalancerArn": listener["LoadBalancerArn"],
            "port": listener.get("Port"),
            "protocol": listener.get("Protocol"),
            "defaultActions": _action_outputs(listener.get("DefaultActions") or []),
            **read_tags(elb, id_),
        }
        if listener.get("Protocol") in ("HTTPS", "TLS"):  # the only ones with TLS settings
            outputs["sslPolicy"] = listener.get("SslPolicy")
            certificates = listener.get("Certificates") or []
            if len(certificates) == 1:
                outputs["certificateArn"] = certificates[0]["CertificateArn"]
        return {k: v for k, v in outputs.items() if v is not None}

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        elb = aws.client("elbv2")
        settings = ("port", "protocol", "defaultActions", "sslPolicy", "certificateArn")
        if any(not covers(olds.get(p), news.get(p)) for p in settings):
            elb.modify_listener(ListenerArn=id_, **self._settings(news))
        retag(elb, id_, olds, news)
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        ignore_gone(lambda: aws.client("elbv2").delete_listener(ListenerArn=id_))

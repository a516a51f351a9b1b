"""ACM: certificates AWS issues (DNS or email validated), as Terraform requests them.

Only tags and options change in place; everything that defines the certificate
replaces it. Imported certificates (``certificateBody``/``privateKey``) are not served.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import boto3
from botocore.exceptions import ClientError

from automation.sandbox.provider.model import (
    COMPUTED_ONLY,
    TERRAFORM_ONLY,
    Aws,
    ForceNew,
    NotFound,
    Props,
    Request,
    ResourceType,
    register,
    tags_dict,
    tags_list,
)

CERT_GO = "internal/service/acm/certificate.go"
_IMPORTED = (
    "an imported certificate's: the stand-in's check refuses it (the program requests its own)"
)
REGION_GO = "internal/provider/sdkv2/region.go"
VALIDATIONS_TIMEOUT = 5 * 60.0  # certificateDNSValidationAssignmentTimeout
IN_USE_TIMEOUT = 20 * 60.0  # certificateCrossServicePropagationTimeout


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _rfc3339(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _tag_delta(
    old: Mapping[str, str] | None, new: Mapping[str, str] | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Tags to set and tags to remove to go from ``old`` to ``new``."""
    old, new = old or {}, new or {}
    put = {k: v for k, v in new.items() if old.get(k) != v}
    return put, {k: v for k, v in old.items() if k not in new}


def _acm(aws: Aws, props: Props) -> Any:
    """ACM in the resource's own ``region`` (pulumi-aws v7's per-resource override)."""
    region = props.get("region")
    if not region or region == aws.region:
        return aws.client("acm")
    return boto3.client("acm", region_name=region, endpoint_url=aws.endpoint_url)


def _options(options: Mapping[str, Any] | None) -> dict[str, str]:
    options = options or {}
    api = {
        "CertificateTransparencyLoggingPreference": options.get(
            "certificateTransparencyLoggingPreference", "ENABLED"
        )
    }
    if options.get("export"):
        api["Export"] = options["export"]
    return api


def _validations_available(cert: Mapping[str, Any]) -> bool:
    """Terraform's statusCertificateDomainValidationsAvailable."""
    if cert.get("Type") == "PRIVATE":
        return cert.get("Status") != "PENDING_VALIDATION"
    if cert.get("Type") != "AMAZON_ISSUED":
        return True
    return any(
        v.get("ResourceRecord")
        or v.get("ValidationEmails")
        or v.get("ValidationStatus") == "SUCCESS"
        for v in cert.get("DomainValidationOptions", [])
    )


@register
class Certificate(ResourceType):
    """An ACM certificate; id = its ARN."""

    token = "aws:acm/certificate:Certificate"
    not_read = {
        "certificateBody": _IMPORTED, "certificateChain": _IMPORTED, "privateKey": _IMPORTED,
        "privateKeyWo": _IMPORTED, "privateKeyWoVersion": _IMPORTED,
        "earlyRenewalDuration": TERRAFORM_ONLY,
        "renewalSummaries": COMPUTED_ONLY,
    }  # fmt: skip
    force_new = (
        ForceNew("certificateAuthorityArn", f"{CERT_GO}: certificate_authority_arn ForceNew"),
        ForceNew("domainName", f"{CERT_GO}: domain_name ForceNew"),
        ForceNew("keyAlgorithm", f"{CERT_GO}: key_algorithm ForceNew"),
        ForceNew("region", f"{REGION_GO}: forceNewIfRegionChanges (injected region)"),
        ForceNew("subjectAlternativeNames", f"{CERT_GO}: subject_alternative_names ForceNew"),
        ForceNew("validationMethod", f"{CERT_GO}: validation_method ForceNew"),
        ForceNew("validationOptions", f"{CERT_GO}: validation_option ForceNew"),
    )
    computed = (
        "arn",
        "domainValidationOptions",
        "keyAlgorithm",
        "notAfter",
        "notBefore",
        "options",
        "pendingRenewal",
        "region",
        "renewalEligibility",
        "status",
        "tagsAll",
        "type",
        "validationEmails",
    )

    def check(self, req: Request, news: Props) -> Props:
        if news.get("certificateBody") or news.get("privateKey"):
            raise ValueError("imported certificates are not served by the sandbox")
        domain = news.get("domainName")
        if not domain:
            raise ValueError("domainName is required")
        if not (news.get("validationMethod") or news.get("certificateAuthorityArn")):
            raise ValueError("certificateAuthorityArn or validationMethod must be set")
        sans = news.get("subjectAlternativeNames") or []
        if not isinstance(sans, list):  # still unknown during a preview
            return news
        # ACM lists the domain among the SANs; Terraform's CustomizeDiff adds it too.
        names = sorted({*sans, domain})
        if any(name.endswith(".") for name in names):
            raise ValueError("domainName and subjectAlternativeNames cannot end with a period")
        return {**news, "subjectAlternativeNames": names}

    def create(self, aws: Aws, req: Request, inputs: Props) -> tuple[str, Props]:
        acm = _acm(aws, inputs)
        args: dict[str, Any] = {
            "DomainName": inputs["domainName"],
            "IdempotencyToken": "tf" + secrets.token_hex(13),  # at most 32 characters
            "SubjectAlternativeNames": inputs["subjectAlternativeNames"],
        }
        if inputs.get("validationMethod"):
            args["ValidationMethod"] = inputs["validationMethod"]
        if inputs.get("certificateAuthorityArn"):
            args["CertificateAuthorityArn"] = inputs["certificateAuthorityArn"]
        if inputs.get("keyAlgorithm"):
            args["KeyAlgorithm"] = inputs["keyAlgorithm"]
        if inputs.get("options"):
            args["Options"] = _options(inputs["options"])
        if inputs.get("validationOptions"):
            args["DomainValidationOptions"] = [
                {"DomainName": o["domainName"], "ValidationDomain": o["validationDomain"]}
                for o in inputs["validationOptions"]
            ]
        if inputs.get("tags"):
            args["Tags"] = tags_list(inputs["tags"])
        arn = acm.request_certificate(**args)["CertificateArn"]
        deadline = time.monotonic() + VALIDATIONS_TIMEOUT
        while not _validations_available(
            acm.describe_certificate(CertificateArn=arn)["Certificate"]
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"ACM gave {arn} no domain validation options in time")
            time.sleep(2)
        return arn, self.read(aws, req, arn, inputs)

    def read(self, aws: Aws, req: Request, id_: str, state: Props) -> Props:
        acm = _acm(aws, state)
        try:
            cert = acm.describe_certificate(CertificateArn=id_)["Certificate"]
            tags = tags_dict(acm.list_tags_for_certificate(CertificateArn=id_).get("Tags"))
        except ClientError as exc:
            if _code(exc) == "ResourceNotFoundException":
                raise NotFound(id_) from exc
            raise
        if cert["Status"] == "VALIDATION_TIMED_OUT":  # Terraform treats it as gone
            raise NotFound(id_)
        validations = {
            v["DomainName"]: {
                "domainName": v["DomainName"],
                "resourceRecordName": v["ResourceRecord"]["Name"],
                "resourceRecordType": v["ResourceRecord"]["Type"],
                "resourceRecordValue": v["ResourceRecord"]["Value"],
            }
            for v in cert.get("DomainValidationOptions", [])
            if v.get("ResourceRecord")
        }
        emails = [
            e
            for v in cert.get("DomainValidationOptions", [])
            for e in v.get("ValidationEmails", [])
        ]
        method = "NONE"
        if cert.get("Type") == "AMAZON_ISSUED" and cert.get("DomainValidationOptions"):
            method = cert["DomainValidationOptions"][0].get("ValidationMethod", "NONE")
        options = cert.get("Options", {})
        outputs: Props = {
            "arn": cert["CertificateArn"],
            "domainName": cert["DomainName"],
            "domainValidationOptions": [validations[k] for k in sorted(validations)],
            "keyAlgorithm": str(cert.get("KeyAlgorithm", "")).replace("-", "_"),
            "options": {
                "certificateTransparencyLoggingPreference": options.get(
                    "CertificateTransparencyLoggingPreference", "ENABLED"
                ),
                **({"export": options["Export"]} if options.get("Export") else {}),
            },
            "pendingRenewal": False,
            "region": state.get("region") or acm.meta.region_name,
            "renewalEligibility": cert.get("RenewalEligibility", ""),
            "status": cert["Status"],
            "subjectAlternativeNames": sorted(cert.get("SubjectAlternativeNames", [])),
            "tags": tags,
            "tagsAll": tags,
            "type": cert.get("Type", ""),
            "validationEmails": emails,
            "validationMethod": method,
        }
        for key, api in (("notAfter", "NotAfter"), ("notBefore", "NotBefore")):
            if cert.get(api):
                outputs[key] = _rfc3339(cert[api])
        if cert.get("CertificateAuthorityArn"):
            outputs["certificateAuthorityArn"] = cert["CertificateAuthorityArn"]
        if state.get("validationOptions"):
            outputs["validationOptions"] = state["validationOptions"]  # not returned by ACM
        return outputs

    def update(self, aws: Aws, req: Request, id_: str, olds: Props, news: Props) -> Props:
        acm = _acm(aws, news)
        put, remove = _tag_delta(olds.get("tags"), news.get("tags"))
        if remove:
            acm.remove_tags_from_certificate(CertificateArn=id_, Tags=tags_list(remove))
        if put:
            acm.add_tags_to_certificate(CertificateArn=id_, Tags=tags_list(put))
        if news.get("options") and _options(news["options"]) != _options(olds.get("options")):
            acm.update_certificate_options(CertificateArn=id_, Options=_options(news["options"]))
        return self.read(aws, req, id_, news)

    def delete(self, aws: Aws, req: Request, id_: str, state: Props) -> None:
        """Retry while another service still uses it, as Terraform does for 20 minutes."""
        acm = _acm(aws, state)
        deadline = time.monotonic() + IN_USE_TIMEOUT
        while True:
            try:
                acm.delete_certificate(CertificateArn=id_)
                return
            except ClientError as exc:
                if _code(exc) == "ResourceNotFoundException":
                    return
                if _code(exc) != "ResourceInUseException" or time.monotonic() > deadline:
                    raise
            time.sleep(10)

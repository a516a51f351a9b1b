"""What adoption found, what it could not, and what it leaves alone."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from components.contract.cluster_models import KeptInput


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AdoptedResource(_Model):
    """One declared resource and the live one behind it."""

    type: str
    name: str
    """The program's logical name."""
    id: str
    import_id: str | None
    """What the engine imports it by; None: recorded by an idempotent create (pulumi-aws
    cannot import the type, e.g. ``aws:autoscaling/attachment:Attachment``)."""


class Addition(_Model):
    """A declared resource nothing live matches, which adoption's update creates beside
    what runs (``automation.adoption.additions`` says which may be)."""

    type: str
    name: str
    """The program's logical name."""
    why: str
    """What was looked for and not found, or what it belongs to."""


class LiveResource(_Model):
    """A live resource the program does not model: tagged for the cluster, a rule of a
    security group adoption takes (kops's own rules, one a person added) or an inline
    policy of a role it takes (kops's grants)."""

    arn: str
    """Its ARN; an inline policy, which has none: pulumi-aws's id, ``<role>:<policy>``."""
    kind: str
    """``<service>:<resource type>``, e.g. ``ec2:security-group``."""


class Discovery(_Model):
    """The mapping from the program's first phase to what runs."""

    stack: str
    cluster: str
    phase: str
    resources: list[AdoptedResource]
    problems: list[str]
    """One sentence per resource nothing or several things match; adoption imports
    nothing while there is one."""
    skipped: list[str]
    """Resources not looked for because one they refer to was not found."""
    additions: list[Addition] = []
    unmodelled: list[LiveResource]

    @property
    def imports(self) -> dict[str, str]:
        """``<type>::<name>`` -> import id, for ``components.imports``."""
        from components.imports import key

        return {key(r.type, r.name): r.import_id for r in self.resources if r.import_id is not None}


class Difference(_Model):
    """One attribute where the live resource and the stack file disagree."""

    name: str
    """The program's logical name of the resource."""
    type: str
    attribute: str
    live: str
    declared: str
    replaces: bool = False
    """Changing it makes AWS replace the resource (never accepted as an update)."""
    added: list[str] = []
    """The keys the declared value only adds to the live map (tags); else empty."""
    live_input: JsonValue = Field(default=None, exclude=True)
    """The whole top-level input, live, as JSON (what ``--keep-live`` keeps)."""
    declared_input: JsonValue = Field(default=None, exclude=True)
    """The whole top-level input as the stack file declares it."""

    @property
    def resource(self) -> str:
        return f"{self.name} ({self.type})"

    def line(self) -> str:
        how = " (a replace)" if self.replaces else ""
        return (
            f"{self.resource}: {self.attribute} is {self.live} live, {self.declared} declared{how}"
        )


class AdoptReport(_Model):
    """What ``kubeshift adopt`` found, planned and did."""

    stack: str
    phase: str
    outcome: str
    """``planned`` (dry run), ``refused``, ``adopted`` or ``unchanged``."""
    discovery: Discovery
    differences: list[Difference] = []
    refusals: list[str] = []
    imported: list[str] = []
    """Resources imported (``adopted``) or to import (``planned``); none when refused."""
    recorded: list[str] = []
    """Attachments recorded by an idempotent create, or to record; none when refused."""
    added: list[str] = []
    """Resources created beside what runs (``Discovery.additions``), or to create."""
    already: list[str] = []
    """Resources already in the stack's state (adopted before)."""
    message: str = ""
    terraform_claims: list[str] = []
    """Addresses in ``runtime.terraform_state`` of resources kubeshift adopts: Terraform
    still manages them (its next apply would put them back)."""
    terraform_release: list[str] = []
    """The ``terraform state rm`` commands that release them."""
    kops_claims: list[str] = []
    """Instance groups kops's state store (``runtime.kops_state``) still holds whose Auto
    Scaling groups kubeshift adopts: kops's next update would put them back."""
    kops_release: list[str] = []
    """The ``aws s3 mv`` commands that release them."""
    kept: dict[str, dict[str, KeptInput]] = {}
    """Live values kept in place of kubeshift's (``--keep-live``), by logical name and
    attribute; written to the stack file when adopted."""

"""What a copy is asked to do (:class:`CopyOptions`), and the anchored registry rewrite.

Options are validated where they are built (the stack's settings, tests): namespace
names that are DNS labels and never the cluster's own, known kinds in canonical order,
and registry rewrites that each can apply (none hidden behind an earlier, broader one).
:class:`RegistryRewrite` matches an image only at its start and on a path boundary,
unlike Velero's substring replace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from automation.kube.copy.kinds import DEFAULT_KINDS, KIND_BY_NAME, KindSpec
from automation.kube.selector_text import check as check_selector
from automation.kube.stateful import StatefulChoice

FIELD_MANAGER = "kubeshift"
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})


class RegistryRewrite(BaseModel):
    """Replace the registry (or registry/path) prefix of image references, anchored.

    ``source`` matches an image only at its start and on a boundary: after a bare
    host (``registry.example.com``) the next character must be ``/``; after a
    host/path (``registry.example.com/team/app``) it may also be ``:`` or ``@`` (tag or
    digest). ``docker.io`` also matches short Docker Hub names (``nginx:1.27``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(
        description="The registry (or registry/path) prefix an image reference must start "
        "with to be rewritten, e.g. registry.example.com."
    )
    target: str = Field(description="What replaces that prefix, e.g. registry-mirror.example.com.")

    @field_validator("source", "target")
    @classmethod
    def _reference_prefix(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value or "://" in value or any(c.isspace() for c in value):
            raise ValueError(f"{value!r} is not a registry prefix like 'registry.example.com'")
        return value

    def apply(self, image: str) -> str | None:
        """The rewritten image, or None when ``image`` is not under ``source``."""
        candidate = _docker_hub_long_form(image) if self.source in _DOCKER_HUB else image
        if not candidate.startswith(self.source):
            return None
        rest = candidate[len(self.source) :]
        boundaries = ("/", ":", "@") if "/" in self.source else ("/",)
        if rest and not rest.startswith(boundaries):
            return None
        return self.target + rest


_DOCKER_HUB = frozenset({"docker.io", "index.docker.io"})


def _docker_hub_long_form(image: str) -> str:
    """``nginx`` → ``docker.io/library/nginx``; ``me/app`` → ``docker.io/me/app``."""
    first, sep, _ = image.partition("/")
    has_registry = sep and ("." in first or ":" in first or first == "localhost")
    if has_registry:
        return "docker.io" + image[len(first) :] if first == "index.docker.io" else image
    return f"docker.io/{image}" if sep else f"docker.io/library/{image}"


def rewrite_image(image: str, rewrites: Sequence[RegistryRewrite]) -> str:
    """``image`` with the first matching rewrite applied (unchanged when none matches)."""
    for rule in rewrites:
        new = rule.apply(image)
        if new is not None:
            return new
    return image


_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def _copied_namespaces(value: tuple[str, ...]) -> tuple[str, ...]:
    if bad := [n for n in value if not _NAMESPACE.fullmatch(n)]:
        raise ValueError(f"{bad[0]!r} is not a namespace name (a DNS label)")
    system = sorted(set(value) & SYSTEM_NAMESPACES)
    if system:
        raise ValueError(
            f"namespace(s) {', '.join(system)} belong to the cluster itself and are "
            "never copied (the mirror runs its own CNI and add-ons)"
        )
    return tuple(dict.fromkeys(value))


def _known_kinds(value: tuple[str, ...]) -> tuple[str, ...]:
    lower = {k.lower(): k for k in KIND_BY_NAME}
    unknown = sorted(k for k in value if k.lower() not in lower)
    if unknown:
        raise ValueError(f"unknown kind(s) {', '.join(unknown)}; known: {', '.join(DEFAULT_KINDS)}")
    wanted = {lower[k.lower()] for k in value}
    return tuple(k for k in DEFAULT_KINDS if k in wanted)  # canonical order


def _rewrites_that_all_apply(value: tuple[RegistryRewrite, ...]) -> tuple[RegistryRewrite, ...]:
    """The first matching rewrite wins, so one under an earlier one's source never would."""
    for later_index, later in enumerate(value):
        for earlier in value[:later_index]:
            if _hub_named(later.source) == _hub_named(earlier.source):
                raise ValueError(f"{later.source!r} is rewritten twice; keep one rewrite")
            if _under(later.source, earlier.source):
                raise ValueError(
                    f"the rewrite of {later.source!r} never applies: the earlier rewrite of "
                    f"{earlier.source!r} takes every image under it; put the narrower first"
                )
        if later.target == later.source:
            raise ValueError(f"the rewrite of {later.source!r} names it as its own target")
    return value


def _under(source: str, prefix: str) -> bool:
    """``source`` is ``prefix`` or a path below it (Docker Hub by either name)."""
    source, prefix = (_hub_named(x) for x in (source, prefix))
    return source == prefix or source.startswith(prefix + "/")


def _hub_named(source: str) -> str:
    host, sep, rest = source.partition("/")
    return f"docker.io{sep}{rest}" if host in _DOCKER_HUB else source


CopiedNamespaces = Annotated[tuple[str, ...], AfterValidator(_copied_namespaces)]
CopiedKinds = Annotated[tuple[str, ...], AfterValidator(_known_kinds)]
RegistryRewrites = Annotated[tuple[RegistryRewrite, ...], AfterValidator(_rewrites_that_all_apply)]


class CopyOptions(BaseModel):
    """What to copy from the primary to the mirror."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    namespaces: CopiedNamespaces = Field(min_length=1, description="Namespaces to copy.")
    kinds: CopiedKinds = Field(default=DEFAULT_KINDS, min_length=1)
    registry_rewrites: RegistryRewrites = ()
    label_selector: Annotated[str, AfterValidator(check_selector)] | None = Field(
        default=None, description="Copy only matching objects."
    )
    skip_finished_jobs: bool = Field(
        default=True, description="Do not copy Jobs that already completed or failed."
    )
    field_manager: str = FIELD_MANAGER
    concurrency: int = Field(
        default=8, ge=1, le=64, description="Objects of one kind applied at once."
    )
    stateful: StatefulChoice = Field(
        default="refuse",
        description="Workloads with PersistentVolumeClaims: refuse, leave-on-primary or "
        "copy-without-data (automation.kube.stateful).",
    )

    @property
    def specs(self) -> tuple[KindSpec, ...]:
        return tuple(KIND_BY_NAME[k] for k in self.kinds)

"""Whether a phase changes anything, judged from the program and the stack's checkpoint.

The engine answers that question with a preview that checks and diffs every resource
through its provider: about a minute for a phase of 600 resources that changes none.
Here the real program runs under the SDK's mocks instead (``review.render``), each
registration answered with what the checkpoint (``pulumi stack export``) holds for its
URN, so every input the program derives from another resource's outputs is what the
engine would send. The phase changes nothing only when every resource it declares is in
the checkpoint, under the same type, parent, provider, dependencies and protection,
with inputs equal to the checked inputs kept there (the provider's defaults, which its
``__defaults`` list names, set aside) and outputs still equal to them (nothing a refresh
read since, which the provider's diff would see), and the checkpoint holds nothing the
program no longer declares. Anything it cannot compare — a secret it cannot read, a
pending operation, a resource being imported or replaced — counts as a change: the
verdict may send a phase to the full preview needlessly, never past one it needs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import rpc
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from automation.core.bridge_defaults import DEFAULTS
from automation.review import render as rendering
from automation.review.set_attributes import SET_ATTRIBUTES

STACK_TYPE = "pulumi:pulumi:Stack"
PROVIDER_PREFIX = "pulumi:providers:"
ROOT = "<stack>"
INTERNAL = "__internal"
"""A provider's inputs the engine adds itself (``pluginDownloadURL`` ...)."""
SIG = rpc._special_sig_key
SECRET_SIG = rpc._special_secret_sig
SHOWN = 3


@dataclass(frozen=True)
class Verdict:
    """What the program at a phase would change on the stack, as far as it can be told."""

    changes: tuple[str, ...]
    """One line per resource the engine would act on (or could not be compared)."""
    compared: int
    """Resources the program declares, each compared with the checkpoint."""
    root: str | None
    """The stack resource's URN in the checkpoint (None: the stack has no resources)."""
    differing: tuple[str, ...] = ()
    """URNs (as the engine makes them) of the resources to create, change or delete."""
    whole: bool = True
    """A difference only a preview of every resource can place (a provider's, an
    interrupted update's): no target set will do."""
    dependents: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """URN -> the checkpoint's resources that depend on it (parent, dependencies,
    property dependencies, provider, deleted-with), as ``--target-dependents`` follows."""

    @property
    def unchanged(self) -> bool:
        return not self.changes and self.root is not None

    def targets(self, urns: Iterable[str] | None = None) -> list[str] | None:
        """The stack resource, ``urns`` (default: what differs) and all that depends on
        them in the checkpoint, to preview and update without the engine's own
        ``--target-dependents`` (which takes every child of a targeted stack resource);
        None when only a preview of every resource will do."""
        if self.root is None or (urns is None and self.whole):
            return None
        chosen = set(self.differing if urns is None else urns) - {self.root}
        queue = list(chosen)
        while queue:
            for dependent in self.dependents.get(queue.pop(), ()):
                if dependent not in chosen:
                    chosen.add(dependent)
                    queue.append(dependent)
        return [self.root, *sorted(chosen)]

    def summary(self) -> str:
        if self.unchanged:
            return (
                f"the program declares {self.compared} resources, each as the checkpoint holds it"
            )
        shown = "; ".join(self.changes[:SHOWN])
        more = f" (and {len(self.changes) - SHOWN} more)" if len(self.changes) > SHOWN else ""
        return f"{len(self.changes)} differ from the checkpoint: {shown}{more}"


def tail(urn: str) -> str:
    """``<type chain>::<name>``; the stack resource, whatever its name, is ``<stack>``."""
    parts = urn.split("::", 2)
    rest = parts[2] if len(parts) == 3 else urn
    return ROOT if rest.split("::", 1)[0] == STACK_TYPE else rest


class _CheckpointMonitor(rendering._RecordingMonitor):
    """Makes URNs as the engine does and answers each registration the checkpoint knows
    with the id and outputs it holds; anything else with the offline mocks."""

    def __init__(self, mocks: pulumi.runtime.Mocks, held: Mapping[str, Mapping[str, Any]]) -> None:
        super().__init__(mocks)
        self.held = held

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        if parent and tail(parent) != ROOT:
            type_ = f"{parent.split('::')[2]}${type_}"
        return super().make_urn("", type_, name)

    def RegisterResource(self, request: Any) -> Any:
        urn = self.make_urn(request.parent, request.type, request.name)
        found = self.held.get(tail(urn))
        if request.type == STACK_TYPE or found is None or found.get("type") != request.type:
            return super().RegisterResource(request)
        _ensure_event_loop()
        state = _as_sdk(found.get("outputs") or {})
        obj = _sync_await(rpc.serialize_properties(state, {}))
        response = resource_pb2.RegisterResourceResponse(
            urn=urn, id=str(found.get("id") or ""), object=obj
        )
        inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
        self.records.append((request, response, inputs))
        return response


def judge(
    config: Mapping[str, Any],
    phase: str,
    deployment: Mapping[str, Any],
    stack_config: Mapping[str, str],
) -> Verdict:
    """What ``phase`` of the program for ``config`` would change on the stack whose
    checkpoint is ``deployment``; ``stack_config``: the stack's config as the engine
    gives it to default providers (``aws:region`` ...)."""
    resources = [r for r in deployment.get("resources") or [] if isinstance(r, dict)]
    root = next((str(r["urn"]) for r in resources if r.get("type") == STACK_TYPE), None)
    held = {tail(str(r["urn"])): r for r in resources if not r.get("delete")}
    if root is None:  # a stack never updated: the engine creates everything
        return Verdict(("the stack has no resources yet",), 0, None, whole=True)
    monitors: list[_CheckpointMonitor] = []

    def monitor(mocks: pulumi.runtime.Mocks) -> rendering._RecordingMonitor:
        monitors.append(_CheckpointMonitor(mocks, held))
        return monitors[-1]

    rendering.render_program(config, phase, monitor=monitor)
    prefix = "::".join(root.split("::")[:2]) + "::"
    changes: list[str] = []
    differing: list[str] = []
    whole = bool(deployment.get("pending_operations"))
    if whole:
        changes.append("the checkpoint holds operations an interrupted update left")
    declared: set[str] = set()
    for request, response, inputs in monitors[-1].records:
        key = tail(response.urn)
        declared.add(key)
        old = held.get(key)
        if old is None:
            changes.append(f"create {key}")
            differing.append(prefix + key)
            continue
        found, needs_whole = _differences(request, inputs, old, held, stack_config)
        changes += [f"{key}: {difference}" for difference in found]
        differing += [str(old["urn"])] if found else []
        whole = whole or needs_whole
    for key, old in held.items():
        kind = str(old.get("type", ""))
        if key == ROOT or kind.startswith(PROVIDER_PREFIX) or old.get("external"):
            continue
        if key not in declared:
            changes.append(f"delete {key}")
            differing.append(str(old["urn"]))
    graph = _dependents(resources, root)
    return Verdict(tuple(changes), len(monitors[-1].records), root, tuple(differing), whole, graph)


def _dependents(resources: Iterable[Mapping[str, Any]], root: str) -> dict[str, frozenset[str]]:
    """URN -> the resources that depend on it; the stack resource has none (every
    resource is its child, and none needs it to change)."""
    found: dict[str, set[str]] = {}
    for resource in resources:
        urn = str(resource.get("urn", ""))
        on = [str(resource.get("parent") or ""), *(resource.get("dependencies") or ())]
        for urns in (resource.get("propertyDependencies") or {}).values():
            on += urns or []
        on += [str(resource.get("deletedWith") or ""), *(resource.get("replaceWith") or ())]
        on.append(str(resource.get("provider") or "").rsplit("::", 1)[0])
        for dependency in on:
            if dependency and dependency != root:
                found.setdefault(str(dependency), set()).add(urn)
    return {urn: frozenset(users) for urn, users in found.items()}


def _differences(
    request: Any,
    inputs: Mapping[str, Any],
    old: Mapping[str, Any],
    held: Mapping[str, Mapping[str, Any]],
    stack_config: Mapping[str, str],
) -> tuple[list[str], bool]:
    """How the resource differs from its checkpoint, and whether only a preview of
    every resource can tell what follows (a provider's change reaches all it serves)."""
    found: list[str] = []
    whole: list[str] = []
    if old.get("pendingReplacement") or old.get("initErrors"):
        whole.append("left half-done by an earlier update")
    if request.importId:
        whole.append("declared to be imported")
    if bool(request.protect) != bool(old.get("protect")):
        found.append("protection")
    if bool(request.retainOnDelete) != bool(old.get("retainOnDelete")):
        found.append("retain-on-delete")
    if tail(request.deletedWith or "") != tail(str(old.get("deletedWith") or "")):
        found.append("deleted-with")
    if sorted(request.additionalSecretOutputs) != sorted(old.get("additionalSecretOutputs") or []):
        found.append("additional secret outputs")
    if tail(request.parent) != tail(str(old.get("parent") or "")):
        found.append("parent")
    if _tails(request.dependencies) != _tails(old.get("dependencies") or ()):
        found.append("dependencies")
    if request.custom:
        whole += _provider_differences(request, old, held, stack_config)
        kept = _canonical(old.get("inputs") or {})
        declared = _canonical(dict(inputs), sdk=True)
        outputs = old.get("outputs") or {}
        sets = SET_ATTRIBUTES.get(request.type, frozenset())
        differ = sorted(
            k for k in (set(kept) | set(declared)) - {DEFAULTS}
            if not _declared_as(declared, kept, k, unordered=k in sets)
            or (
                k in outputs and k in kept
                and not _within(kept[k], _canonical(outputs[k]), unordered=k in sets)
            )
        )  # fmt: skip
        if differ:
            found.append(f"inputs {', '.join(differ)}")
    return found + whole, bool(whole)


def _tails(urns: Iterable[str]) -> list[str]:
    return sorted(tail(str(u)) for u in urns if u)


def _provider_differences(
    request: Any,
    old: Mapping[str, Any],
    held: Mapping[str, Mapping[str, Any]],
    stack_config: Mapping[str, str],
) -> list[str]:
    """A default provider the program would give the resource other than the one it has:
    another version, or configuration the stack's config no longer holds."""
    if request.provider:
        return ["an explicit provider, compared only by the engine"]
    urn = str(old.get("provider") or "").rsplit("::", 1)[0]
    package = request.type.split(":", 1)[0]
    name = "default_" + request.version.replace(".", "_") if request.version else "default"
    if tail(urn) != f"{PROVIDER_PREFIX}{package}::{name}":
        return [f"provider {tail(urn) or 'none'}, where the program's default is {name}"]
    provider = held.get(tail(urn)) or {}
    kept = {k: v for k, v in (provider.get("inputs") or {}).items() if k != "version"}
    # the engine's own entries (where the plugin comes from), not the stack's config
    internal = kept.pop(INTERNAL, None) or {}
    download = {"pluginDownloadURL": request.pluginDownloadURL} if request.pluginDownloadURL else {}
    given = {k.split(":", 1)[1]: v for k, v in stack_config.items() if k.startswith(f"{package}:")}
    if _config(kept) != _config(given) or internal != download:
        return [f"the {package} provider's configuration"]
    return []


def _config(values: Mapping[str, Any]) -> dict[str, Any]:
    """Provider configuration compared as values: a JSON string as what it encodes."""
    decoded: dict[str, Any] = {}
    for key, value in values.items():
        try:
            decoded[key] = json.loads(value) if isinstance(value, str) else value
        except ValueError:
            decoded[key] = value
    return decoded


def _canonical(value: Any, *, sdk: bool = False) -> Any:
    """A value comparable across the SDK's and the export's encodings; a secret stays
    marked as one, a secret the export keeps encrypted never equals anything."""
    if isinstance(value, Mapping):
        if value.get(SIG) == SECRET_SIG:
            if "value" in value:
                return ("secret", _canonical(value["value"], sdk=sdk))
            if "plaintext" in value:
                return ("secret", _canonical(json.loads(value["plaintext"])))
            return ("unreadable secret", id(value))
        return {k: _canonical(v, sdk=sdk) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v, sdk=sdk) for v in value]
    if sdk and (value is rpc.UNKNOWN or type(value).__name__ == "Unknown"):
        return ("unknown", id(value))
    return value


def _declared_as(
    declared: Mapping[str, Any], kept: Mapping[str, Any], key: str, *, unordered: bool = False
) -> bool:
    """Whether ``key`` is declared as the checkpoint's checked inputs keep it: equal (in
    any order when ``unordered``: a set), or left out by the program where the provider
    filled it in (named in ``__defaults``, at any depth the provider keeps such a list)."""
    if key not in declared:
        return key not in kept or key in (kept.get(DEFAULTS) or ())
    if unordered:
        return _matched(declared[key], kept.get(key), _same)
    return _same(declared[key], kept.get(key))


def _same(declared: Any, kept: Any) -> bool:
    if isinstance(declared, dict) and isinstance(kept, dict):
        keys = (set(declared) | set(kept)) - {DEFAULTS}
        return all(_declared_as(declared, kept, k) for k in keys)
    if isinstance(declared, list) and isinstance(kept, list):
        return len(declared) == len(kept) and all(map(_same, declared, kept))
    return bool(declared == kept)


def _matched(wanted: Any, found: Any, equal: Callable[[Any, Any], bool]) -> bool:
    """Whether two lists hold members ``equal`` one to one, in any order (a set's);
    anything but two lists is compared as itself."""
    if not (isinstance(wanted, list) and isinstance(found, list)):
        return equal(wanted, found)
    if len(wanted) != len(found):
        return False
    left = list(found)
    for member in wanted:
        match = next((i for i, other in enumerate(left) if equal(member, other)), None)
        if match is None:
            return False
        del left[match]
    return True


def _within(declared: Any, held: Any, *, unordered: bool = False) -> bool:
    """Whether the outputs still hold what was declared: every declared value found
    there (a set's members in any order when ``unordered``), nested attributes the
    provider computed beside them allowed (a target group's health-check ``timeout``),
    and a JSON document as what it encodes (the provider suppresses diffs between
    equivalent policies). A value a refresh read otherwise is a difference the
    provider's diff would see."""
    if unordered and not _unset(declared):
        return _matched(declared, held, _within)
    if _unset(declared):
        return _unset(held)
    if isinstance(declared, dict) and isinstance(held, dict):
        return all(_within(v, held.get(k)) for k, v in declared.items() if k != DEFAULTS)
    if isinstance(declared, list) and isinstance(held, list):
        return len(declared) == len(held) and all(map(_within, declared, held))
    if isinstance(declared, tuple) and isinstance(held, tuple):  # secrets, as canonical
        return declared[0] == held[0] and _within(declared[1], held[1])
    if isinstance(declared, str) and isinstance(held, str) and declared != held:
        return _document(declared) is not None and _document(declared) == _document(held)
    return bool(declared == held)


def _unset(value: Any) -> bool:
    return value is None or value == [] or value == {}


def _document(text: str) -> Any:
    """``text`` parsed when it is a JSON object or array; else None."""
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _as_sdk(value: Any) -> Any:
    """The export's encoding as the SDK serializes it (a shown secret as a secret)."""
    if isinstance(value, Mapping):
        if value.get(SIG) == SECRET_SIG and "plaintext" in value:
            return {SIG: SECRET_SIG, "value": _as_sdk(json.loads(value["plaintext"]))}
        return {k: _as_sdk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_sdk(v) for v in value]
    return value

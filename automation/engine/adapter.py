"""The adapter between kubeshift and the Pulumi engine (Automation API, local program).

The runner talks to an ``Engine``: set the phase, preview, update, read outputs and
URNs. ``PulumiEngine`` implements it with ``LocalWorkspace`` on the repository root,
so the runner and a hand-run ``pulumi up`` execute the same ``__main__.py`` with the
same ``stacks/Pulumi.<stack>.yaml`` (config goes through the CLI, which honours
``stackConfigDir``; we never pass ``project_settings``). The SDK is imported lazily so
the CLI starts fast, and every Pulumi failure is mapped to kubeshift's own errors here.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from automation.core.bridge_defaults import without_defaults
from automation.core.errors import (
    EngineMissingError,
    KubeshiftError,
    from_command_error,
    torn_checkpoint_read,
)
from automation.engine.processes import engine_markers
from automation.engine.property_paths import MISSING, added_keys, shown_change, top_level, value_at
from automation.engine.timeline import Timeline
from components.contract.engine_vars import RECORD_ONLY_VAR, RECORD_VAR
from components.contract.progress import Record

PHASE_KEY = "kubeshift:phase"
TORN_READ_ATTEMPTS = 5
"""Tries of a call that changes nothing when it read a checkpoint another process was
rewriting; the pauses between them (0.2 s, doubling) add up to 3 s."""
_TORN_READ_PAUSE = 0.2
T = TypeVar("T")


@dataclass(frozen=True)
class PropertyChange:
    """One property of a planned step: how it changes, before (``old``) and after."""

    path: str
    kind: str
    """The engine's diff kind: add, delete, update, or one of them with ``-replace``."""
    old: str
    new: str
    added: tuple[str, ...] = ()
    """The keys the change only adds to a map (tags); empty when it does anything else."""
    live_input: Any = None
    """The whole top-level input ``path`` is in, as JSON, before (None when absent)."""
    declared_input: Any = None
    """The same input after: as the program declares it."""

    @property
    def replaces(self) -> bool:
        return self.kind.endswith("-replace")


@dataclass(frozen=True)
class ResourceChange:
    """One step the engine plans or takes for one resource."""

    op: str
    urn: str
    type: str
    name: str
    diffs: tuple[str, ...] = ()
    detail: tuple[PropertyChange, ...] = ()
    """Per property, for steps the engine diffed (updates, replaces, imports)."""
    delete_first: bool = False
    """A step of a replacement that deletes the old resource before creating its
    successor (the provider's or the program's delete-before-replace)."""

    @classmethod
    def from_urn(cls, op: str, urn: str, diffs: Sequence[str] = ()) -> ResourceChange:
        return cls(op=op, urn=urn, type=urn_type(urn), name=urn_name(urn), diffs=tuple(diffs))


def marked_delete_first(changes: Sequence[ResourceChange]) -> tuple[ResourceChange, ...]:
    """``changes`` (in the engine's step order), each step of a delete-first replacement
    marked: its ``delete-replaced`` comes before its ``create-replacement``, where a
    create-first replacement deletes only after every create and update
    (pulumi/pulumi ``pkg/resource/deploy/step_generator.go``)."""
    first_seen: dict[tuple[str, str], int] = {}
    for index, change in enumerate(changes):
        first_seen.setdefault((change.urn, change.op), index)
    early = {
        urn
        for (urn, op), index in first_seen.items()
        if op == "delete-replaced" and index < first_seen.get((urn, "create-replacement"), -1)
    }
    return tuple(
        dataclasses.replace(c, delete_first=True) if c.urn in early and c.op in _REPLACING else c
        for c in changes
    )


_REPLACING = frozenset({"replace", "create-replacement", "delete-replaced"})


@dataclass(frozen=True)
class PreviewOutcome:
    changes: tuple[ResourceChange, ...]
    summary: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    """Where the preview's time went (``engine.timeline``)."""

    def changed(self) -> tuple[ResourceChange, ...]:
        return tuple(c for c in self.changes if c.op not in {"same", "read"})


@dataclass(frozen=True)
class Checkpoint:
    """The stack's state as the engine exports it, and the config default providers get."""

    deployment: dict[str, Any]
    config: dict[str, str]
    """Every config value by key (``aws:region``), secrets decrypted: never logged."""


@dataclass(frozen=True)
class UpdateOutcome:
    summary: dict[str, int]
    outputs: dict[str, Any]
    seconds: dict[str, float] = field(default_factory=dict)
    """Where the update's time went (``engine.timeline``)."""


def urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def urn_type(urn: str) -> str:
    qualified = urn.rsplit("::", 2)[-2] if urn.count("::") >= 2 else ""
    return qualified.rsplit("$", 1)[-1]


@dataclass(frozen=True)
class PendingCreate:
    """A create a killed engine had started and not recorded: the resource it declared."""

    urn: str
    type: str
    inputs: dict[str, Any]

    @property
    def name(self) -> str:
        """The resource's logical name (the URN's last part)."""
        return urn_name(self.urn)


class Engine(Protocol):
    """What the runner needs from Pulumi; a fake implements it in unit tests."""

    def set_phase(self, phase: str) -> None: ...
    def preview(
        self, targets: Sequence[str] = (), plan: Path | None = None, *, dependents: bool = True
    ) -> PreviewOutcome:
        """Preview; with ``plan``, also save the update plan there. ``targets`` take
        what depends on them along unless ``dependents`` is False."""
        ...

    def up(
        self, targets: Sequence[str] = (), plan: Path | None = None, *, dependents: bool = True
    ) -> UpdateOutcome:
        """Update; with ``plan``, apply exactly that plan or stop where the update departs."""
        ...

    def carry(self, record: Record | None) -> None:
        """Pass ``record`` to the program with every following preview and update."""
        ...

    def record(self, record: Record) -> dict[str, Any]:
        """A record-only update: add ``record`` to the stack's progress; returns the outputs."""
        ...

    def outputs(self) -> dict[str, Any]: ...
    def resource_urns(self) -> list[str]: ...
    def refresh(self, *, clear_pending_creates: bool = False) -> dict[str, int]: ...
    def cancel(self) -> None: ...
    def pending_operations(self) -> list[str]: ...
    def pending_creates(self) -> list[PendingCreate]: ...
    def take_pending_creates(self, taken: Mapping[str, str]) -> None:
        """Record each pending create named in ``taken`` (URN -> live id) as the
        resource it made, for the next refresh to read; other pending operations are
        dropped, as that refresh would drop them."""
        ...

    def secret_config(self) -> dict[str, str]: ...
    def checkpoint(self) -> Checkpoint: ...


OutputSink = Callable[[str], None]


def require_pulumi_cli(command: str = "pulumi") -> str:
    """Path of the ``pulumi`` CLI, or an ``EngineMissingError`` saying how to get one."""
    found = shutil.which(command)
    if not found:
        raise EngineMissingError(
            "The `pulumi` CLI was not found on PATH; install Pulumi "
            "(https://www.pulumi.com/docs/install/) or build it with scripts/build-pulumi "
            "and add its bin directory to PATH."
        )
    return found


@contextmanager
def mapped_errors(action: str, stack: str = "") -> Iterator[None]:
    """Translate Pulumi SDK exceptions raised inside the block into kubeshift errors."""
    from pulumi.automation import errors as auto_errors

    try:
        yield
    except KubeshiftError:
        raise
    except FileNotFoundError as exc:
        raise EngineMissingError(
            f"The `pulumi` CLI could not be run to {action}; install Pulumi or put it on PATH."
        ) from exc
    except auto_errors.CommandError as exc:
        raise from_command_error(exc, action, stack) from exc


def through_torn_reads(call: Callable[[], T]) -> T:
    """``call`` (a Pulumi CLI call that changes no state), tried again up to
    :data:`TORN_READ_ATTEMPTS` times while it fails on a torn checkpoint read."""
    from pulumi.automation import errors as auto_errors

    for attempt in range(1, TORN_READ_ATTEMPTS + 1):
        try:
            return call()
        except auto_errors.CommandError as exc:
            if attempt == TORN_READ_ATTEMPTS or not torn_checkpoint_read(exc):
                raise
            time.sleep(_TORN_READ_PAUSE * 2 ** (attempt - 1))
    raise AssertionError("unreachable: the last attempt returns or raises")


class PulumiEngine:
    """``Engine`` over the Automation API in local-program mode."""

    def __init__(
        self,
        project_dir: Path,
        stack_name: str,
        *,
        create: bool = False,
        pulumi_command: Any = None,
        on_output: OutputSink | None = None,
        env: dict[str, str] | None = None,
        run_id: str = "",
    ) -> None:
        from pulumi import automation as auto

        self._auto = auto
        self._on_output = on_output
        self.stack_name = stack_name
        with mapped_errors(f"open stack '{stack_name}'", stack_name):
            command = pulumi_command or auto.PulumiCommand()
            # Update plans (preview --save-plan, up --plan) are still flagged experimental.
            # The KUBESHIFT_* variables mark every process of this engine (CLI, language
            # host, program, plugins) as kubeshift's, for this stack and run: a later run
            # finds the ones a kill orphaned, and the program tells them from a by-hand up.
            env_vars = {
                "PULUMI_EXPERIMENTAL": "true",
                **engine_markers(project_dir, stack_name, run_id),
                **(env or {}),
            }
            options = auto.LocalWorkspaceOptions(
                work_dir=str(project_dir), pulumi_command=command, env_vars=env_vars
            )
            open_stack = auto.create_or_select_stack if create else auto.select_stack
            self._stack = through_torn_reads(
                lambda: open_stack(stack_name, work_dir=str(project_dir), opts=options)
            )

    # -- config ------------------------------------------------------------------------

    def set_phase(self, phase: str) -> None:
        with mapped_errors(f"set {PHASE_KEY} to {phase}", self.stack_name):
            value = self._auto.ConfigValue(value=phase)
            through_torn_reads(lambda: self._stack.set_config(PHASE_KEY, value))

    # -- progress marks (components.contract.progress) ------------------------------------------

    def carry(self, record: Record | None) -> None:
        self._set_env({RECORD_VAR: record.to_json() if record is not None else None})

    def record(self, record: Record) -> dict[str, Any]:
        """Add ``record`` to the stack's ``progress`` output, changing no resource.

        The program renders the phase the stack last deployed and the update targets
        the stack resource alone, so even a program edited since cannot touch anything.
        """
        saved = self._stack.workspace.env_vars
        self._set_env({RECORD_VAR: record.to_json(), RECORD_ONLY_VAR: "1"})
        phases = ", ".join(f"{m.milestone} {m.phase}" for m in record.marks)
        try:
            with mapped_errors("record progress in the stack", self.stack_name):
                result = self._stack.up(
                    target=[self._root_urn()],
                    on_output=self._on_output,
                    message=f"kubeshift: record {phases}",
                )
        finally:
            self._stack.workspace.env_vars = saved
        return _plain_outputs(result.outputs)

    def _set_env(self, changes: Mapping[str, str | None]) -> None:
        """Set (or, for None, drop) variables of every later engine command."""
        env = {k: v for k, v in self._stack.workspace.env_vars.items() if k not in changes}
        env.update({k: v for k, v in changes.items() if v is not None})
        self._stack.workspace.env_vars = env

    def _root_urn(self) -> str:
        project, stack = self._stack.workspace.project_settings().name, self.stack_name
        return f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"

    # -- operations --------------------------------------------------------------------

    def preview(
        self, targets: Sequence[str] = (), plan: Path | None = None, *, dependents: bool = True
    ) -> PreviewOutcome:
        changes: list[ResourceChange] = []
        timeline = Timeline()

        def on_event(event: Any) -> None:
            timeline.on_event(event)
            pre = getattr(event, "resource_pre_event", None)
            if pre is None:
                return
            meta = pre.metadata
            op = str(getattr(meta.op, "value", meta.op))
            change = ResourceChange.from_urn(op, meta.urn, meta.diffs or ())
            changes.append(dataclasses.replace(change, detail=_property_changes(meta)))

        with mapped_errors("preview the stack", self.stack_name):
            result = self._stack.preview(
                target=list(targets) or None,
                target_dependents=(bool(targets) and dependents) or None,
                diff=True,
                on_output=self._on_output,
                on_event=on_event,
                plan=str(plan) if plan is not None else None,
            )
        summary = {str(getattr(k, "value", k)): int(v) for k, v in result.change_summary.items()}
        return PreviewOutcome(marked_delete_first(changes), summary, timeline.seconds())

    def up(
        self, targets: Sequence[str] = (), plan: Path | None = None, *, dependents: bool = True
    ) -> UpdateOutcome:
        timeline = Timeline()
        with mapped_errors("update the stack", self.stack_name):
            result = self._stack.up(
                target=list(targets) or None,
                target_dependents=(bool(targets) and dependents) or None,
                on_output=self._on_output,
                on_event=timeline.on_event,
                plan=str(plan) if plan is not None else None,
            )
        summary = {str(k): int(v) for k, v in (result.summary.resource_changes or {}).items()}
        return UpdateOutcome(summary, _plain_outputs(result.outputs), timeline.seconds())

    def outputs(self) -> dict[str, Any]:
        with mapped_errors("read stack outputs", self.stack_name):
            return _plain_outputs(through_torn_reads(self._stack.outputs))

    def resource_urns(self) -> list[str]:
        return [r["urn"] for r in self._deployment().get("resources", []) if "urn" in r]

    def secret_config(self) -> dict[str, str]:
        """Config keys the stack holds as secrets, decrypted by the engine (never logged)."""
        with mapped_errors("read the stack's config", self.stack_name):
            config = through_torn_reads(self._stack.get_all_config)
        return {key: value.value for key, value in config.items() if value.secret}

    def checkpoint(self) -> Checkpoint:
        """The exported state (secrets stay encrypted) and every config value."""
        with mapped_errors("read the stack's config", self.stack_name):
            config = through_torn_reads(self._stack.get_all_config)
        return Checkpoint(self._deployment(), {k: v.value for k, v in config.items()})

    def refresh(self, *, clear_pending_creates: bool = False) -> dict[str, int]:
        """Read every resource back from the cloud; optionally drop pending creates."""
        with mapped_errors("refresh the stack", self.stack_name):
            result = self._stack.refresh(
                clear_pending_creates=clear_pending_creates or None, on_output=self._on_output
            )
        return {str(k): int(v) for k, v in (result.summary.resource_changes or {}).items()}

    def forget_state(self) -> None:
        """Remove the stack from its backend, leaving every resource running and its
        stack file: what runs is then a cluster no kubeshift state knows."""
        with mapped_errors("remove the stack's state", self.stack_name):
            self._stack.workspace.remove_stack(self.stack_name, force=True, preserve_config=True)

    def cancel(self) -> None:
        """Remove the stack's update lock (``pulumi cancel``)."""
        with mapped_errors("remove the stack's lock", self.stack_name):
            self._stack.cancel()

    def pending_operations(self) -> list[str]:
        """``<type> <urn>`` of operations an interrupted update left in the state."""
        return [
            f"{op.get('type', '?')} {op.get('resource', {}).get('urn', '?')}"
            for op in self._deployment().get("pending_operations") or []
        ]

    def pending_creates(self) -> list[PendingCreate]:
        return [
            PendingCreate(
                urn=str(op["resource"]["urn"]),
                type=str(op["resource"].get("type", "")),
                inputs=without_defaults(op["resource"].get("inputs") or {}),
            )
            for op in self._deployment().get("pending_operations") or []
            if op.get("type") == "creating" and (op.get("resource") or {}).get("custom")
        ]

    def take_pending_creates(self, taken: Mapping[str, str]) -> None:
        """Through the state, as ``pulumi refresh --import-pending-creates`` means to
        (this engine's refresh drops such an import): each pending resource named joins
        the state's resources with its live id, its inputs standing for its outputs
        until the refresh reads them. ``pulumi stack import`` drops every pending
        operation it is given."""
        if not taken:
            return
        with mapped_errors("export the stack", self.stack_name):
            exported = through_torn_reads(self._stack.export_stack)
        deployment = dict(exported.deployment or {})
        resources = list(deployment.get("resources") or [])
        for op in deployment.get("pending_operations") or []:
            resource = dict(op.get("resource") or {})
            live_id = taken.get(str(resource.get("urn")))
            if op.get("type") == "creating" and live_id is not None:
                outputs = without_defaults(resource.get("inputs") or {})
                resources.append({**resource, "id": live_id, "outputs": outputs})
        deployment["resources"] = resources
        deployment["pending_operations"] = []
        with mapped_errors("import the stack", self.stack_name):
            self._stack.import_stack(self._auto.Deployment(exported.version, deployment))

    def _deployment(self) -> dict[str, Any]:
        with mapped_errors("export the stack", self.stack_name):
            return dict(through_torn_reads(self._stack.export_stack).deployment or {})


def _property_changes(meta: Any) -> tuple[PropertyChange, ...]:
    """The step's detailed diff with each property's value before and after.

    For an import the engine's ``old`` is what it read from the cloud and ``new`` what
    the program declares.
    """
    detailed = meta.detailed_diff or {}
    old = _bare((meta.old.inputs or meta.old.outputs) if meta.old is not None else None)
    new = _bare(meta.new.inputs if meta.new is not None else None)
    changes = []
    for path, diff in sorted(detailed.items()):
        live, declared = value_at(old, path), value_at(new, path)
        before, after = shown_change(path, live, declared)
        kind = str(getattr(diff.diff_kind, "value", diff.diff_kind))
        added = added_keys(path, live, declared)
        top = top_level(path)
        changes.append(
            PropertyChange(
                path=path, kind=kind, old=before, new=after, added=added,
                live_input=_json(value_at(old, top)), declared_input=_json(value_at(new, top)),
            )
        )  # fmt: skip
    return tuple(changes)


def _bare(props: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A step's property bag without the provider's defaults lists."""
    return None if props is None else without_defaults(props)


def _json(value: Any) -> Any:
    """``value`` as JSON data; None for :data:`MISSING`."""
    return None if value is MISSING else value


def _plain_outputs(outputs: Mapping[str, Any]) -> dict[str, Any]:
    return {key: getattr(value, "value", value) for key, value in outputs.items()}

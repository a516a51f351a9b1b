"""Offline rendering: run the real Pulumi program under the SDK's mocks and list what it declares.

No ``pulumi`` CLI, no plugins, no credentials: the program in ``__main__.py`` runs in
this process against a fresh :class:`pulumi.runtime.MockMonitor` per call, which
records every resource registration (type, logical name, parent, inputs as the engine
sees them, aliases and the options that decide replacements). ``kubeshift render`` and
``kubeshift diff`` are built on :func:`render`; tests use :func:`record` to run a
single component the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import runpy
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import resource as pulumi_resource_runtime
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from automation.review.rendered import PROGRAM, RenderedResource
from components import collector
from components.contract import kept_use
from components.contract import keys as stack_keys
from components.contract import loading as stack_loading
from components.program import READ_STACK_OUTPUTS

PROJECT = "kubeshift"
SECRET = "[secret]"


@dataclass(frozen=True)
class Rendering:
    """Everything one run declared: resources sorted by URN, and the stack outputs."""

    resources: list[RenderedResource]
    outputs: dict[str, Any]
    seconds: float
    kept_looked_up: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    """Per section of kept values, every key the program looked for (``contract.kept_use``)."""


class _Mocks(pulumi.runtime.Mocks):
    """Returns inputs as outputs plus the computed attributes the program reads."""

    def __init__(self, region: str, stack_outputs: Mapping[str, Any] | None = None) -> None:
        self.region = region
        self.stack_outputs = stack_outputs

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        state = dict(args.inputs)
        rid = f"{args.name}-id"
        kind = args.typ.rsplit(":", 1)[-1]
        state.setdefault("arn", f"arn:aws:mock:{self.region}:000000000000:{kind}/{args.name}")
        if args.typ == "aws:lb/loadBalancer:LoadBalancer":
            state["dnsName"] = f"{state.get('name', args.name)}.elb.{self.region}.amazonaws.com"
            state["zoneId"] = "Z0MOCKELB"
            state["arnSuffix"] = f"net/{state.get('name', args.name)}/0"
        elif args.typ == "aws:ec2/networkInterface:NetworkInterface":
            ips = state.get("privateIps") or []
            state["privateIp"] = ips[0] if ips else "10.255.255.254"
        elif args.typ == "aws:ec2/eip:Eip":
            state["allocationId"] = f"eipalloc-{args.name}"
            state["publicIp"] = "203.0.113.10"
        elif args.typ == "aws:ec2/launchTemplate:LaunchTemplate":
            state["latestVersion"] = 1
        elif args.typ == "aws:acm/certificate:Certificate":
            state["domainValidationOptions"] = []
        elif args.typ == "aws:route53/zone:Zone":
            state["zoneId"] = f"Z{args.name}"
            state["nameServers"] = []
        return rid, state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[Any]]:
        # Offline there is no stack to read back: the program then skips its progress
        # check. Tests of that check pass the outputs a stack would hold.
        if args.token == READ_STACK_OUTPUTS and self.stack_outputs is not None:
            name = args.args.get("name", "")
            return {"name": name, "outputs": dict(self.stack_outputs)}, []
        return {}, []


class _RecordingMonitor(pulumi_mocks.MockMonitor):
    """A MockMonitor that also keeps each registration's parent, aliases and options."""

    def __init__(self, mocks: pulumi.runtime.Mocks) -> None:
        super().__init__(mocks)
        self.records: list[tuple[Any, Any, dict[str, Any]]] = []

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            inputs = rpc.deserialize_properties(request.object, keep_unknowns=True)
            self.records.append((request, response, inputs))
        return response


MonitorFactory = Callable[[pulumi.runtime.Mocks], _RecordingMonitor]


def _redact(value: Any) -> Any:
    if rpc.is_rpc_secret(value):
        return SECRET
    if isinstance(value, dict):
        return {k: _redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    if value is rpc.UNKNOWN or type(value).__name__ == "Unknown":
        return "[unknown]"
    return value


def _aliases(request: Any) -> tuple[dict[str, Any], ...]:
    found: list[dict[str, Any]] = []
    for alias in request.aliases:
        if alias.HasField("spec"):
            spec = alias.spec
            entry: dict[str, Any] = {"name": spec.name} if spec.name else {}
            if spec.type:
                entry["type"] = spec.type
            if spec.parentUrn:
                entry["parentUrn"] = spec.parentUrn
            if spec.noParent:
                entry["noParent"] = True
            found.append(entry)
        else:
            found.append({"urn": alias.urn})
    return tuple(found)


def _options(request: Any) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if request.deleteBeforeReplace:
        options["deleteBeforeReplace"] = True
    if request.replaceOnChanges:
        options["replaceOnChanges"] = list(request.replaceOnChanges)
    if request.ignoreChanges:
        options["ignoreChanges"] = list(request.ignoreChanges)
    if request.protect:
        options["protect"] = True
    if request.importId:
        options["import"] = request.importId
    if request.dependencies:
        options["dependsOn"] = sorted(urn.rsplit("::", 1)[-1] for urn in request.dependencies)
    return options


def _config_strings(values: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Config as ``set_all_config`` wants it: strings, objects as JSON, secrets hidden."""
    flat: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, value in values.items():
        if isinstance(value, dict) and set(value) == {"secure"}:
            flat[key] = SECRET
            secret_keys.append(key)
        elif isinstance(value, str):
            flat[key] = value
        else:
            flat[key] = json.dumps(value)
    return flat, secret_keys


def record(
    program: Callable[[], Any],
    *,
    config: Mapping[str, Any] | None = None,
    stack: str = "render",
    region: str = "us-east-1",
    stack_outputs: Mapping[str, Any] | None = None,
    mocks: pulumi.runtime.Mocks | None = None,
    monitor: MonitorFactory | None = None,
) -> Rendering:
    """Run ``program`` under fresh mocks and return what it registered.

    Safe to call repeatedly in one process: every call installs a new monitor and a
    new root stack. ``program`` may return a dict of outputs to resolve. ``mocks``
    answers the registrations instead of the offline ones (adoption answers with
    what runs); ``monitor`` makes the monitor that receives them (the checkpoint's
    answers, ``review.checkpoint``).
    """
    started = time.perf_counter()
    chosen = mocks or _Mocks(region, stack_outputs)
    with _without_stack_traces(), collector.collecting_rarely():
        rendering = _record(program, config, stack, (monitor or _RecordingMonitor)(chosen))
    return Rendering(rendering.resources, rendering.outputs, time.perf_counter() - started)


@contextlib.contextmanager
def _without_stack_traces() -> Iterator[None]:
    """Skip the SDK's per-resource Python stack capture (source positions for the engine).

    It costs ~2 ms per resource and mocks have no use for it; restored on exit.
    """
    original = pulumi_resource_runtime._get_stack_trace
    pulumi_resource_runtime._get_stack_trace = lambda: source_pb2.StackTrace()
    try:
        yield
    finally:
        pulumi_resource_runtime._get_stack_trace = original


def _record(
    program: Callable[[], Any],
    config: Mapping[str, Any] | None,
    stack: str,
    monitor: _RecordingMonitor,
) -> Rendering:
    settings.ROOT.set(None)
    pulumi.runtime.set_mocks(
        monitor.mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor
    )
    flat, secret_keys = _config_strings(config or {})
    pulumi.runtime.set_all_config(flat, secret_keys)
    settings.SETTINGS.rpc_manager.clear()
    settings.SETTINGS.outputs.clear()
    resolved: dict[str, Any] = {}

    def run() -> Any:
        returned = program()
        root = settings.get_root_resource()
        exported = dict(getattr(root, "outputs", {}) or {})
        if isinstance(returned, dict):
            exported.update(returned)

        def keep(values: Any) -> None:
            resolved.update(values)

        return pulumi.Output.from_input(exported).apply(keep).future()

    _sync_await(run_pulumi_func(run))
    return Rendering(_collect(monitor), _redact(resolved), 0.0)


def _collect(monitor: _RecordingMonitor) -> list[RenderedResource]:
    names = {response.urn: request.name for request, response, _ in monitor.records}
    resources: list[RenderedResource] = []
    for request, response, inputs in monitor.records:
        state = rpc.deserialize_properties(response.object, keep_unknowns=True)
        resources.append(
            RenderedResource(
                type=request.type,
                name=request.name,
                parent=names.get(request.parent),
                inputs=_redact(inputs),
                urn=response.urn,
                id=response.id,
                outputs=_redact(state),
                custom=bool(request.custom),
                aliases=_aliases(request),
                options=_options(request),
                parent_urn=request.parent or None,
            )
        )
    resources.sort(key=lambda r: r.urn)
    return resources


def _run_main() -> None:
    runpy.run_path(str(PROGRAM), run_name="__main__")


def render_program(
    config: Mapping[str, Any],
    phase: str | None = None,
    mocks: pulumi.runtime.Mocks | None = None,
    monitor: MonitorFactory | None = None,
) -> Rendering:
    """Validate ``config`` (raising ``ConfigError``) and run ``__main__.py`` under mocks
    (``mocks``: answers other than the offline ones; ``monitor``: see :func:`record`)."""
    values = dict(config)
    if phase is not None:
        values[stack_keys.PHASE_KEY] = phase
    validated = stack_loading.load_config(values)
    kept_use.reset()
    rendering = record(
        lambda: _run_main(),
        config=values,
        stack=validated.cluster.name,
        region=validated.region,
        mocks=mocks,
        monitor=monitor,
    )
    return dataclasses.replace(rendering, kept_looked_up=kept_use.looked_up())


def render(config: Mapping[str, Any], phase: str | None = None) -> list[RenderedResource]:
    """Every resource the program declares for ``config`` at ``phase`` (default: its own)."""
    return render_program(config, phase).resources

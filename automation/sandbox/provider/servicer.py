"""The gRPC face of the stand-in ``aws`` provider: the engine's calls mapped onto types.

The engine launches the plugin, reads the port it prints, and calls ``Configure``,
``Check``, ``Diff``, ``Create``/``Read``/``Update``/``Delete`` for each ``aws:*``
resource. Each call is routed to the :class:`~.model.ResourceType` registered for the
resource's token; failures come back as gRPC errors whose text the engine shows next
to the resource.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlparse

import grpc
from botocore.exceptions import BotoCoreError, ClientError
from google.protobuf import empty_pb2, struct_pb2
from pulumi.output import Unknown
from pulumi.runtime import rpc
from pulumi.runtime.proto import plugin_pb2, provider_pb2, provider_pb2_grpc

from automation.core.bridge_defaults import without_defaults
from automation.sandbox.provider import types as _types  # noqa: F401  (registers every type)
from automation.sandbox.provider.diffing import (
    contains_unknown,
    deletes_first,
    in_prior_order,
    read_back,
    shaped_like,
    with_defaults,
)
from automation.sandbox.provider.model import REGISTRY, Aws, NotFound, Props, Request, ResourceType

PLUGIN_VERSION = "7.51.1"  # the pulumi-aws version kubeshift's program pins
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
log = logging.getLogger("kubeshift.sandbox.provider")
R = TypeVar("R")


class ProviderError(Exception):
    """A call the stand-in refuses, with the sentence the engine shows."""


def urn_token(urn: str) -> str:
    return urn.rsplit("::", 2)[-2].rsplit("$", 1)[-1]


def urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _plain(value: Any) -> Any:
    """Secrets unwrapped (the engine re-marks outputs of secret inputs as secret), and a
    value unknown during a preview as the wire's sentinel, :data:`rpc.UNKNOWN`: the SDK
    deserializes it as an ``Unknown`` object, which compares equal to nothing and which
    JSON cannot encode."""
    if isinstance(value, Unknown):
        return rpc.UNKNOWN
    if rpc.is_rpc_secret(value):
        return _plain(rpc.unwrap_rpc_secret(value))
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def props_of(struct: struct_pb2.Struct) -> Props:
    return _plain(rpc.deserialize_properties(struct, keep_unknowns=True) or {})


def struct_of(props: Props) -> struct_pb2.Struct:
    # A private loop: asyncio.run() would leave the thread with no current event loop,
    # which breaks any Pulumi program later run in-process (the SDK's mocks).
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(rpc.serialize_properties(props, {}))
    finally:
        loop.close()


def answering(method: Callable[..., R]) -> Callable[..., R]:
    """Turn failures into gRPC errors with one readable sentence."""

    @functools.wraps(method)
    def wrapper(self: AwsProvider, request: Any, context: grpc.ServicerContext) -> R:
        try:
            return method(self, request, context)
        except ProviderError as exc:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
        except ClientError as exc:
            err = exc.response.get("Error", {})
            text = f"{err.get('Code', 'Error')}: {err.get('Message', exc)}"
            context.abort(grpc.StatusCode.UNKNOWN, f"moto (sandbox AWS) refused: {text}")
        except BotoCoreError as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, f"sandbox AWS unreachable: {exc}")
        except NotImplementedError as exc:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, str(exc) or method.__name__)
        raise AssertionError("unreachable")  # context.abort raises

    return wrapper


class AwsProvider(provider_pb2_grpc.ResourceProviderServicer):
    """``pulumirpc.ResourceProvider`` for the ``aws`` package, backed by moto."""

    def __init__(self) -> None:
        self._aws: Aws | None = None
        self._lock = threading.Lock()

    # -- provider configuration ------------------------------------------------------

    def GetPluginInfo(self, request: Any, context: Any) -> plugin_pb2.PluginInfo:
        return plugin_pb2.PluginInfo(version=PLUGIN_VERSION)

    def CheckConfig(self, request: Any, context: Any) -> provider_pb2.CheckResponse:
        return provider_pb2.CheckResponse(inputs=request.news)

    def DiffConfig(self, request: Any, context: Any) -> provider_pb2.DiffResponse:
        return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)

    @answering
    def Configure(self, request: Any, context: Any) -> provider_pb2.ConfigureResponse:
        args = props_of(request.args)
        variables = dict(request.variables)
        region = (
            args.get("region")
            or variables.get("aws:config:region")
            or os.environ.get("AWS_REGION")
            or os.environ.get("AWS_DEFAULT_REGION")
        )
        endpoint = os.environ.get("AWS_ENDPOINT_URL")
        if not region:
            raise ProviderError("the sandbox aws provider needs aws:region in the stack.")
        if not endpoint or urlparse(endpoint).hostname not in LOCAL_HOSTS:
            raise ProviderError(
                "the sandbox aws provider only talks to the sandbox's moto server on "
                f"127.0.0.1, but AWS_ENDPOINT_URL is {endpoint or 'unset'}; start it with "
                "`kubeshift sandbox up` and use `kubeshift sandbox env`."
            )
        with self._lock:
            self._aws = Aws(region=str(region), endpoint_url=endpoint)
        return provider_pb2.ConfigureResponse(
            acceptSecrets=False, supportsPreview=True, acceptResources=False
        )

    # -- resources ---------------------------------------------------------------------

    def _type(self, urn: str) -> tuple[ResourceType, Request]:
        token = urn_token(urn)
        kind = REGISTRY.get(token)
        if kind is None:
            raise ProviderError(f"the sandbox aws provider does not serve {token}.")
        return kind, Request(name=urn_name(urn), token=token)

    @property
    def aws(self) -> Aws:
        if self._aws is None:
            raise ProviderError("the sandbox aws provider was not configured.")
        return self._aws

    @answering
    def Check(self, request: Any, context: Any) -> provider_pb2.CheckResponse:
        kind, req = self._type(request.urn)
        news = without_defaults(props_of(request.news))
        try:
            checked = kind.check(req, news)
        except ValueError as exc:
            failure = provider_pb2.CheckFailure(property="", reason=str(exc))
            return provider_pb2.CheckResponse(inputs=request.news, failures=[failure])
        return provider_pb2.CheckResponse(inputs=struct_of(with_defaults(news, checked)))

    @answering
    def Diff(self, request: Any, context: Any) -> provider_pb2.DiffResponse:
        kind, _ = self._type(request.urn)
        olds = without_defaults(props_of(request.olds))
        old_inputs = props_of(request.old_inputs) if request.HasField("old_inputs") else olds
        checked = props_of(request.news)
        news = without_defaults(checked)
        verdict = kind.diff(without_defaults(old_inputs), news, olds)
        if not verdict.changed:
            return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)
        kinds = provider_pb2.PropertyDiff
        detailed = {}
        for prop in verdict.changed:
            if prop in verdict.replaces:
                kind_ = kinds.UPDATE_REPLACE if prop in old_inputs else kinds.ADD_REPLACE
            elif prop not in news:
                kind_ = kinds.DELETE
            else:
                kind_ = kinds.UPDATE if prop in old_inputs else kinds.ADD
            detailed[prop] = kinds(kind=kind_, inputDiff=True)
        return provider_pb2.DiffResponse(
            changes=provider_pb2.DiffResponse.DIFF_SOME,
            diffs=list(verdict.changed),
            replaces=list(verdict.replaces),
            deleteBeforeReplace=deletes_first(
                bool(verdict.replaces), kind.auto_named, kind.delete_before_replace, checked
            ),
            stables=[k for k in olds if k not in verdict.changed],
            detailedDiff=detailed,
            hasDetailedDiff=True,
        )

    @answering
    def Create(self, request: Any, context: Any) -> provider_pb2.CreateResponse:
        kind, req = self._type(request.urn)
        inputs = without_defaults(props_of(request.properties))
        if request.preview or contains_unknown(inputs):
            planned = {**{k: rpc.UNKNOWN for k in kind.computed}, **inputs}
            return provider_pb2.CreateResponse(id="", properties=struct_of(planned))
        id_, outputs = kind.create(self.aws, req, inputs)
        in_prior_order(kind.sets, inputs, outputs)
        log.info("created %s %s", req.token, id_)
        return provider_pb2.CreateResponse(id=id_, properties=struct_of(outputs))

    @answering
    def Update(self, request: Any, context: Any) -> provider_pb2.UpdateResponse:
        kind, req = self._type(request.urn)
        olds = without_defaults(props_of(request.olds))
        news = without_defaults(props_of(request.news))
        if request.preview or contains_unknown(news):
            planned = {**olds, **news, **{k: rpc.UNKNOWN for k in kind.recomputed(olds, news)}}
            return provider_pb2.UpdateResponse(properties=struct_of(planned))
        outputs = kind.update(self.aws, req, request.id, olds, news)
        in_prior_order(kind.sets, news, outputs)
        log.info("updated %s %s", req.token, request.id)
        return provider_pb2.UpdateResponse(properties=struct_of(outputs))

    @answering
    def Read(self, request: Any, context: Any) -> provider_pb2.ReadResponse:
        kind, req = self._type(request.urn)
        state = without_defaults(props_of(request.properties) or props_of(request.inputs))
        try:
            live = kind.read(self.aws, req, request.id, state)
        except NotFound:
            return provider_pb2.ReadResponse(id="")
        outputs = read_back(state, live, kind.moto_omits) if state else live
        in_prior_order(kind.sets, state, outputs)
        declared = without_defaults(props_of(request.inputs))
        computed = set(kind.computed) | {"id", "tagsAll"}
        if declared:
            shaped = shaped_like(outputs, declared)
            assert isinstance(shaped, dict)
            inputs = shaped
        else:  # an import: what the bridge extracts — no computed-only value, no default
            inputs = {
                k: v
                for k, v in outputs.items()
                if (k not in computed or k in kind.optional_computed)
                and not (k in kind.defaults and v == kind.defaults[k])
            }
        id_ = request.id if state else kind.imported_id(self.aws, req, request.id, outputs)
        return provider_pb2.ReadResponse(
            id=id_, properties=struct_of(outputs), inputs=struct_of(inputs)
        )

    @answering
    def Delete(self, request: Any, context: Any) -> empty_pb2.Empty:
        kind, req = self._type(request.urn)
        kind.delete(self.aws, req, request.id, props_of(request.properties))
        log.info("deleted %s %s", req.token, request.id)
        return empty_pb2.Empty()

    def Cancel(self, request: Any, context: Any) -> empty_pb2.Empty:
        return empty_pb2.Empty()

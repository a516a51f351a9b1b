"""A small typed etcd v3 client over the gateway: members, status, member changes, keys.

Cluster calls go to the configured endpoints (``Gateway.post_cluster``); ``status``
asks one member at the URL given. The member list is linearizable by default, so a
decision never rests on one member's stale view of the membership. Byte fields travel
base64-encoded, IDs as decimal strings.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from automation.core.errors import StepFailedError
from automation.etcd.gateway import DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, Gateway
from automation.etcd.models import Member, MemberStatus, hex_id


@dataclass(frozen=True)
class Membership:
    """The member list and the ID of the cluster that answered it."""

    cluster_id: int
    members: tuple[Member, ...]


def _b64(data: str | bytes) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return base64.b64encode(raw).decode()


def _unb64(text: Any) -> bytes:
    return base64.b64decode(str(text or ""))


def prefix_end(prefix: bytes) -> bytes:
    """The ``range_end`` that makes a range cover every key starting with ``prefix``."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return b"\x00"  # every key
    return stripped[:-1] + bytes([stripped[-1] + 1])


class EtcdClient:
    """etcd's v3 API through its JSON gateway, with kubeshift's errors."""

    def __init__(
        self,
        endpoints: Sequence[str],
        *,
        ca_file: Path | None = None,
        cert_file: Path | None = None,
        key_file: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.gateway = Gateway(
            endpoints,
            ca_file=ca_file,
            cert_file=cert_file,
            key_file=key_file,
            timeout=timeout,
            connect_timeout=connect_timeout,
        )

    @property
    def endpoints(self) -> tuple[str, ...]:
        return self.gateway.endpoints

    def close(self) -> None:
        self.gateway.close()

    def __enter__(self) -> EtcdClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- cluster -------------------------------------------------------------------

    def membership(self, *, linearizable: bool = True) -> Membership:
        """The member list agreed by a quorum (or, not linearizable, one member's view)."""
        action = "list the members"
        answer = self.gateway.post_cluster(
            "/v3/cluster/member/list", {"linearizable": linearizable}, action=action
        )
        members = _parse_members(answer, action)
        return Membership(_header_id(answer, "cluster_id"), members)

    def members(self, *, linearizable: bool = True) -> tuple[Member, ...]:
        return self.membership(linearizable=linearizable).members

    def status(self, endpoint: str) -> MemberStatus:
        """The status of the member serving ``endpoint`` (that member only, no failover)."""
        action = "report its status"
        answer = self.gateway.post(endpoint, "/v3/maintenance/status", {}, action=action)
        try:
            return MemberStatus.model_validate(answer)
        except ValidationError as exc:
            raise _malformed(action, exc) from None

    def update_peer_urls(self, member_id: int, urls: Sequence[str]) -> tuple[Member, ...]:
        """Set a member's peer URLs; returns the member list after the change."""
        action = f"update the peer URLs of member {hex_id(member_id)}"
        answer = self.gateway.post_cluster(
            "/v3/cluster/member/update",
            {"ID": str(member_id), "peerURLs": list(urls)},
            action=action,
        )
        return _parse_members(answer, action)

    def add_member(self, peer_urls: Sequence[str], *, learner: bool = False) -> Member:
        """Add a member (not started yet: no name, no client URLs)."""
        action = f"add a member at {', '.join(peer_urls)}"
        answer = self.gateway.post_cluster(
            "/v3/cluster/member/add",
            {"peerURLs": list(peer_urls), "isLearner": learner},
            action=action,
        )
        try:
            return Member.model_validate(answer.get("member") or {})
        except ValidationError as exc:
            raise _malformed(action, exc) from None

    def remove_member(self, member_id: int) -> None:
        self.gateway.post_cluster(
            "/v3/cluster/member/remove",
            {"ID": str(member_id)},
            action=f"remove member {hex_id(member_id)}",
        )

    # --- keys ----------------------------------------------------------------------

    def put(self, key: str | bytes, value: str | bytes) -> int:
        """Write one key; returns the store's revision after the write."""
        answer = self.gateway.post_cluster(
            "/v3/kv/put", {"key": _b64(key), "value": _b64(value)}, action="write a key"
        )
        return _header_id(answer, "revision")

    def get_prefix(self, prefix: str | bytes) -> dict[bytes, bytes]:
        """Every key under ``prefix`` and its value (a linearizable read)."""
        raw = prefix.encode() if isinstance(prefix, str) else prefix
        answer = self.gateway.post_cluster(
            "/v3/kv/range",
            {"key": _b64(raw or b"\x00"), "range_end": _b64(prefix_end(raw))},
            action="read keys",
        )
        return {_unb64(kv.get("key")): _unb64(kv.get("value")) for kv in answer.get("kvs") or []}


def _header_id(answer: dict[str, Any], field: str) -> int:
    try:
        return int((answer.get("header") or {}).get(field) or 0)
    except (TypeError, ValueError):
        return 0


def _parse_members(answer: dict[str, Any], action: str) -> tuple[Member, ...]:
    try:
        return tuple(Member.model_validate(m) for m in answer.get("members") or [])
    except ValidationError as exc:
        raise _malformed(action, exc) from None


def _malformed(action: str, exc: ValidationError) -> StepFailedError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the answer"
    return StepFailedError(
        f"etcd's answer to {action} is not what kubeshift understands ({where}: {first['msg']})."
    )

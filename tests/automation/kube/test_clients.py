"""Building clients: kubeconfig/context errors are one-sentence UserErrors; timeouts apply."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from automation.core.errors import UserError
from automation.kube.clients import ClusterAccess, build_clients, request_kind


def write_kubeconfig(path: Path, *contexts: str, current: str | None = None) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "not-a-secret"}}],
        "contexts": [{"name": n, "context": {"cluster": "c", "user": "u"}} for n in contexts],
        "current-context": current or "",
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_missing_kubeconfig_is_a_user_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(UserError, match=f"Kubeconfig {missing} does not exist") as info:
        build_clients(ClusterAccess(kubeconfig=missing))
    assert "\n" not in str(info.value)


def test_unknown_context_names_the_known_ones(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "kc", "old", "new", current="old")
    with pytest.raises(UserError, match=r"Context 'mirror' is not in kubeconfig .*known: new, old"):
        build_clients(ClusterAccess(kubeconfig=path, context="mirror"))


def test_no_current_context_asks_for_one(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "kc", "old")
    with pytest.raises(UserError, match="no current context"):
        build_clients(ClusterAccess(kubeconfig=path))


def test_kubeconfig_env_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_kubeconfig(tmp_path / "kc", "a", current="a")
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert ClusterAccess().kubeconfig_path() == path
    assert build_clients(ClusterAccess()).name == "a"


class RecordingRest:
    def __init__(self) -> None:
        self.timeouts: list[Any] = []

    def request(self, method: str, url: str, **kw: Any) -> Any:
        self.timeouts.append(kw.get("_request_timeout"))
        raise ConnectionError("no server in unit tests")


def test_default_timeout_and_request_count(tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "kc", "a", current="a")
    clients = build_clients(ClusterAccess(kubeconfig=path, request_timeout=7, pool_size=9))
    assert clients.api_client.configuration.connection_pool_maxsize == 9
    rest = RecordingRest()
    clients.api_client.rest_client = rest  # type: ignore[assignment]
    for call in (
        lambda: clients.core.list_node(),
        lambda: clients.core.list_node(_request_timeout=2),
    ):
        with pytest.raises(ConnectionError):
            call()
    assert rest.timeouts == [7, 2]
    assert clients.request_count == 2
    assert clients.request_counts() == {"LIST nodes": 2}
    assert clients.core is clients.core  # accessors are cached


@pytest.mark.parametrize(
    ("method", "url", "kind"),
    [
        ("POST", "https://h:6443/api/v1/namespaces/ns/pods/p/eviction", "POST pods/eviction"),
        ("GET", "https://h/api/v1/pods?watch=True&fieldSelector=spec.nodeName%3Dn", "WATCH pods"),
        (
            "GET",
            "https://h/apis/policy/v1/poddisruptionbudgets?limit=500",
            "LIST poddisruptionbudgets",
        ),
        ("GET", "https://h/api/v1/namespaces/ns/pods", "LIST pods"),
        ("GET", "https://h/api/v1/namespaces/ns/pods/p", "GET pods"),
        ("PATCH", "https://h/api/v1/nodes/n1", "PATCH nodes"),
    ],
    ids=["eviction", "watch", "list-cluster", "list-namespaced", "get", "patch"],
)
def test_request_kind(method: str, url: str, kind: str) -> None:
    assert request_kind(method, url) == kind


def test_patch_on_conflict_reads_again_after_a_409_and_guards_with_the_version() -> None:
    from types import SimpleNamespace

    from kubernetes.client import ApiException

    from automation.kube.clients import patch_on_conflict

    versions = iter(["1", "2"])
    sent: list[dict] = []

    def read() -> dict:
        return {"metadata": {"resourceVersion": next(versions)}, "spec": {"type": "NodePort"}}

    def write(patch: dict) -> SimpleNamespace:
        sent.append(patch)
        if len(sent) == 1:
            raise ApiException(status=409, reason="Conflict")
        return SimpleNamespace(data=b'{"spec": {"type": "LoadBalancer"}}')

    patched = patch_on_conflict(read, write, lambda _obj: {"spec": {"type": "LoadBalancer"}}, "x")
    assert [p["metadata"]["resourceVersion"] for p in sent] == ["1", "2"]
    assert patched.before["metadata"]["resourceVersion"] == "2"
    assert patched.after == {"spec": {"type": "LoadBalancer"}}


def test_patch_on_conflict_gives_up_retryably_and_skips_needless_writes() -> None:
    from kubernetes.client import ApiException

    from automation.core.errors import RetryableError
    from automation.kube.clients import patch_on_conflict

    def read() -> dict:
        return {"metadata": {"resourceVersion": "1"}}

    def conflict(_patch: dict) -> None:
        raise ApiException(status=409, reason="Conflict")

    with pytest.raises(RetryableError, match="kept changing"):
        patch_on_conflict(read, conflict, lambda _obj: {}, "taint node n1")
    unchanged = patch_on_conflict(read, conflict, lambda _obj: None, "taint node n1")
    assert unchanged.after is None

"""Apply a manifest file (the new CNI's) with server-side apply: idempotent, with a dry run.

pulumi-kubernetes' plugin is not served here, and a CNI manifest (calico.yaml: CRDs,
RBAC, ConfigMaps, the DaemonSet) is a file the operator already has, so the hook
applies it as ``kubectl apply --server-side`` would: each document through the
discovery-based dynamic client, owned by kubeshift's field manager. A document the
cluster already holds as declared keeps its resourceVersion and counts as unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import dynamic
from kubernetes.client.exceptions import ApiException

from automation.core.errors import UserError, from_api_exception
from automation.kube.clients import KubeClients
from components.contract.user_files import (
    AliasBomb,
    BoundedLoader,
    UnreadableFile,
    alias_bomb_sentence,
    read_bounded,
)

FIELD_MANAGER = "kubeshift"


def load_manifest(path: Path, setting: str) -> list[dict[str, Any]]:
    """The documents of ``path``; one sentence naming ``setting`` when it cannot be used."""
    try:
        text = read_bounded(path, setting).decode("utf-8")
        documents = [d for d in yaml.load_all(text, Loader=BoundedLoader) if d is not None]
    except FileNotFoundError:
        raise UserError(f"{setting} {path} does not exist.") from None
    except UnreadableFile as exc:
        raise UserError(str(exc)) from None
    except UnicodeDecodeError:
        raise UserError(f"{setting} {path} is not UTF-8 text; save it as UTF-8.") from None
    except AliasBomb as bomb:
        raise UserError(alias_bomb_sentence(setting, path, bomb)) from None
    except yaml.YAMLError as exc:
        raise UserError(f"{setting} {path} is not YAML ({type(exc).__name__}).") from None
    for index, doc in enumerate(documents, 1):
        if (
            not isinstance(doc, Mapping)
            or not all(doc.get(k) for k in ("apiVersion", "kind"))
            or not (doc.get("metadata") or {}).get("name")
        ):
            raise UserError(
                f"{setting} {path}: document {index} lacks apiVersion, kind or metadata.name."
            )
    if not documents:
        raise UserError(f"{setting} {path} holds no Kubernetes object.")
    return documents


@dataclass(frozen=True)
class ApplyReport:
    """What ``apply_manifest`` did (or, in a dry run, would do), by ``Kind ns/name``."""

    changed: tuple[str, ...]
    unchanged: tuple[str, ...]
    dry_run: bool

    @property
    def message(self) -> str:
        verb = "would apply" if self.dry_run else "applied"
        if not self.changed:
            return f"all {len(self.unchanged)} object(s) already as declared"
        shown = ", ".join(self.changed[:4]) + (" ..." if len(self.changed) > 4 else "")
        return f"{verb} {len(self.changed)} object(s) ({shown}); {len(self.unchanged)} unchanged"


def _label(doc: Mapping[str, Any]) -> str:
    meta = doc.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{doc['kind']} {where}{meta['name']}"


def apply_manifest(
    clients: KubeClients,
    documents: Sequence[Mapping[str, Any]],
    *,
    dry_run: bool = False,
    field_manager: str = FIELD_MANAGER,
) -> ApplyReport:
    """Server-side apply each document in order (CRDs and namespaces first, as written)."""
    api = dynamic.DynamicClient(clients.api_client)
    changed: list[str] = []
    unchanged: list[str] = []
    for doc in documents:
        label = _label(doc)
        meta = doc.get("metadata") or {}
        try:
            resource = api.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
            namespace = meta.get("namespace") or ("default" if resource.namespaced else None)
            before = _current(api, resource, meta["name"], namespace)
            after = api.server_side_apply(
                resource,
                body=dict(doc),
                namespace=namespace,
                field_manager=field_manager,
                force_conflicts=True,
                dry_run="All" if dry_run else None,
            )
        except ApiException as exc:
            raise from_api_exception(exc, f"apply {label}") from exc
        except dynamic.exceptions.ResourceNotFoundError:
            raise UserError(
                f"The cluster does not serve {doc['apiVersion']} {doc['kind']} ({label}); "
                "put the CustomResourceDefinition before it in the manifest."
            ) from None
        same = before is not None and _content(after.to_dict()) == _content(before)
        (unchanged if same else changed).append(label)
    return ApplyReport(tuple(changed), tuple(unchanged), dry_run)


def _current(api: Any, resource: Any, name: str, namespace: str | None) -> dict[str, Any] | None:
    try:
        found = api.get(resource, name=name, namespace=namespace)
    except dynamic.exceptions.NotFoundError:
        return None
    return dict(found.to_dict())


_VOLATILE = ("resourceVersion", "generation", "managedFields")


def _content(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object without what changes on every write (a dry run keeps resourceVersion)."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _VOLATILE}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}

"""Where a stack's journal and run lock live: with the stack's state, in its backend.

Pulumi's self-managed backends keep a stack's state in a bucket or a directory
(``s3://bucket/prefix``, ``file://path``); kubeshift keeps its own two documents for the
stack beside it, under ``.kubeshift/<project>/<stack>/`` (next to Pulumi's
``.pulumi/``), so every operator and CI job that reaches the state reaches the journal
and the lock too. With no self-managed backend (Pulumi Cloud, or a scheme kubeshift
does not write yet) they stay in this machine's state directory, as before.

The backend is the one the engine uses: ``$PULUMI_BACKEND_URL``, else ``Pulumi.yaml``'s
``backend.url``, else the current ``pulumi login`` (``$PULUMI_HOME/credentials.json``).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from automation.config.project import project_name
from automation.core.documents import Document, FileDocument
from automation.engine.torn_sidecars import backend_root
from components.contract.run_marker import state_dir

KUBESHIFT_PREFIX = ".kubeshift"
JOURNAL = "journal.json"
LOCK = "lock.json"

log = logging.getLogger("kubeshift.state")


@dataclass(frozen=True)
class StatePlace:
    """A stack's journal and run lock, and whether other machines share them."""

    journal: Document
    lock: Document
    shared: bool
    local_journal: Path
    """Where this machine kept the journal before it lived with the backend."""

    @property
    def where(self) -> str:
        return self.journal.where.rsplit("/", 1)[0]


def backend_url(project: Path) -> str | None:
    """The backend URL the engine uses for ``project``'s stacks (None: Pulumi Cloud)."""
    if url := os.environ.get("PULUMI_BACKEND_URL"):
        return url
    import yaml

    try:
        declared = yaml.safe_load((project / "Pulumi.yaml").read_text()) or {}
        url = (declared.get("backend") or {}).get("url")
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        url = None  # an unreadable Pulumi.yaml is said where the project's name is read
    if isinstance(url, str) and url:
        return url
    home = Path(os.environ.get("PULUMI_HOME") or Path.home() / ".pulumi")
    try:
        current = json.loads((home / "credentials.json").read_text()).get("current")
    except (OSError, ValueError, AttributeError):
        return None
    return current if isinstance(current, str) and current else None


def local_place(project: Path, stack: str) -> StatePlace:
    directory = state_dir(project)
    journal = directory / f"{stack}.journal.json"
    return StatePlace(
        journal=FileDocument(journal, "The journal"),
        lock=FileDocument(directory / f"{stack}.run-lock.json", "The run lock"),
        shared=False,
        local_journal=journal,
    )


def state_place(project: Path, stack: str) -> StatePlace:
    """Where ``stack``'s journal and lock live (nothing is read or written here)."""
    url = backend_url(project)
    local = local_place(project, stack)
    if url is None or url.startswith(("https://", "http://")):
        return local
    names = (KUBESHIFT_PREFIX, project_name(project), stack)
    if root := backend_root(url):
        directory = root.joinpath(*names)
        return StatePlace(
            journal=FileDocument(directory / JOURNAL, "The journal"),
            lock=FileDocument(directory / LOCK, "The run lock"),
            shared=True,
            local_journal=local.local_journal,
        )
    if url.startswith("s3://"):
        from automation.aws.state_objects import S3Backend, S3Document

        backend = S3Backend.parse(url)
        client = backend.client()
        return StatePlace(
            journal=S3Document(client, backend.bucket, backend.key(*names, JOURNAL)),
            lock=S3Document(client, backend.bucket, backend.key(*names, LOCK)),
            shared=True,
            local_journal=local.local_journal,
        )
    log.warning(
        "kubeshift keeps its journal and run lock with s3:// and file:// backends; with %s "
        "they stay in this machine's state directory",
        url.split("://", 1)[0] + "://",
    )
    return local

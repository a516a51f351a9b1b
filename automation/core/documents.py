"""Documents kubeshift keeps for a stack (its journal, its run lock), replaced only over
the version last read.

A :class:`Document` is one named blob in some store — a file, or an object in the
stack's backend bucket (``automation.aws.state_objects``) — with the store's own
compare-and-swap: :meth:`Document.replace` writes only when the document is still at
the version the writer read (``None``: only when it does not exist yet), and raises
:class:`VersionMoved` otherwise. That is S3's conditional write (``If-Match`` /
``If-None-Match: *``), and for a file the same check and rename under a lock file
beside it. Writers that lose re-read and merge; nobody overwrites what they did not see.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from filelock import FileLock

from components.contract.user_files import MAX_BYTES, UnreadableFile, read_bounded

__all__ = ["Document", "FileDocument", "Stored", "UnreadableFile", "VersionMoved"]


@dataclass(frozen=True)
class Stored:
    """A document's bytes and the version they are (an ETag, a digest)."""

    body: bytes
    version: str


class VersionMoved(Exception):
    """The document is no longer at the version the writer read (or now exists)."""


class Document(Protocol):
    """One blob with compare-and-swap writes."""

    @property
    def where(self) -> str:
        """Where it lives, for sentences (a path, an ``s3://`` URL)."""
        ...

    def read(self) -> Stored | None:
        """Its bytes and version; None when it does not exist. Raises
        :class:`UnreadableFile` with one sentence when it cannot be read."""
        ...

    def replace(self, body: bytes, expected: str | None) -> str:
        """Write ``body`` if the document is at ``expected`` (None: absent); the new
        version. Raises :class:`VersionMoved` when it is not."""
        ...

    def delete(self, expected: str) -> None:
        """Remove it if it is at ``expected``; :class:`VersionMoved` when it is not
        (gone already included)."""
        ...


def digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


class FileDocument:
    """A document in a file: atomic writes (temp file, fsync, rename), the version
    check and the write made under a lock file beside it, so two processes on one
    filesystem never both win."""

    def __init__(self, path: Path, what: str = "The file", limit: int = MAX_BYTES) -> None:
        self.path = path
        self._what = what
        self._limit = limit

    @property
    def where(self) -> str:
        return str(self.path)

    def read(self) -> Stored | None:
        try:
            body = read_bounded(self.path, self._what, self._limit)
        except FileNotFoundError:
            return None
        return Stored(body, digest(body))

    def replace(self, body: bytes, expected: str | None) -> str:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._guard():
            self._check(expected)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(body)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return digest(body)

    def delete(self, expected: str) -> None:
        with self._guard():
            self._check(expected)
            self.path.unlink()

    def _check(self, expected: str | None) -> None:
        current = self.read()
        if (current.version if current else None) != expected:
            raise VersionMoved(f"{self.where} changed since it was read")

    def _guard(self) -> FileLock:
        return FileLock(str(self.path.with_name(self.path.name + ".write-lock")))

"""The stack's backend read from outside, as a test reads it: a ``file://`` directory or
an ``s3://`` bucket in the sandbox's moto, by key (``.pulumi/locks/…``,
``.kubeshift/<project>/<stack>/journal.json``) — never through kubeshift's own code."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

SANDBOX_PROJECT = "kubeshift"  # the sandbox workspace's Pulumi project (this repo's)


class StateStore(Protocol):
    def read(self, key: str) -> bytes | None:
        """The object's bytes; None when it does not exist (or went meanwhile)."""
        ...

    def keys(self, prefix: str) -> list[str]:
        """Every key under ``prefix``, sorted."""
        ...


@dataclass(frozen=True)
class DirectoryStore:
    root: Path

    def read(self, key: str) -> bytes | None:
        try:
            return (self.root / key).read_bytes()
        except FileNotFoundError:
            return None

    def keys(self, prefix: str) -> list[str]:
        base = self.root / prefix
        return sorted(str(p.relative_to(self.root)) for p in base.rglob("*") if p.is_file())


@dataclass(frozen=True)
class BucketStore:
    client: Any
    bucket: str
    prefix: str = ""

    def _key(self, key: str) -> str:
        return "/".join(p for p in (self.prefix, key) if p)

    def read(self, key: str) -> bytes | None:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
        except self.client.exceptions.NoSuchKey:
            return None
        data: bytes = body.read()
        return data

    def keys(self, prefix: str) -> list[str]:
        found: list[str] = []
        pages = self.client.get_paginator("list_objects_v2")
        strip = len(self.prefix) + 1 if self.prefix else 0
        for page in pages.paginate(Bucket=self.bucket, Prefix=self._key(prefix)):
            found += [o["Key"][strip:] for o in page.get("Contents", [])]
        return sorted(found)


def store_of(url: str) -> StateStore:
    """The store a ``PULUMI_BACKEND_URL`` names (the sandbox's: plain HTTP, path style)."""
    if url.startswith("file://"):
        return DirectoryStore(Path(url.removeprefix("file://")))
    parts = urlsplit(url)
    if parts.scheme != "s3":
        raise AssertionError(f"no store for the backend {url!r}")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    import boto3

    make: Any = boto3.client
    client = make(
        "s3",
        region_name=query.get("region"),
        endpoint_url=f"http://{query['endpoint']}",
        aws_access_key_id="sandbox",
        aws_secret_access_key="sandbox",
    )
    return BucketStore(client, parts.netloc, parts.path.strip("/"))


def journal_key(stack: str, project: str = SANDBOX_PROJECT) -> str:
    return f".kubeshift/{project}/{stack}/journal.json"

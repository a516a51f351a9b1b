"""kubeshift's documents in the stack's S3 backend, written with S3's conditional writes.

Pulumi's self-managed backend keeps a stack's state in a bucket
(``s3://bucket/prefix?region=…``, opened by go-cloud's s3blob); kubeshift keeps its
journal and run lock in the same bucket, under ``<prefix>/.kubeshift/<project>/<stack>/``.
Concurrency is S3's own: ``PutObject`` with ``If-None-Match: *`` creates only an absent
key, with ``If-Match: <ETag>`` replaces only the version read, and ``DeleteObject`` with
``If-Match`` removes only that version; S3 answers 412 PreconditionFailed when the
condition fails, 404 NoSuchKey for ``If-Match`` on a missing key, and 409
ConditionalRequestConflict when a concurrent conditional write to the key wins the race
(retry after re-reading) — each is :class:`VersionMoved` here
(https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from automation.aws.clients import AwsAccess, botocore_config, build_session
from automation.aws.failures import BotoCoreError, ClientError
from automation.core.documents import Stored, UnreadableFile, VersionMoved
from automation.core.errors import UserError
from components.contract.user_files import MAX_BYTES

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

_MOVED = {"PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey", "404", "412", "409"}

# go-cloud's s3blob spellings (AWS SDK v1 and v2) of the options kubeshift needs.
_PATH_STYLE = ("s3ForcePathStyle", "use_path_style")
_PLAIN_HTTP = ("disableSSL", "disable_https")


@dataclass(frozen=True)
class S3Backend:
    """A Pulumi ``s3://`` backend URL, read as go-cloud reads it."""

    bucket: str
    prefix: str
    region: str | None = None
    endpoint: str | None = None
    profile: str | None = None
    path_style: bool = False

    @classmethod
    def parse(cls, url: str) -> S3Backend:
        parts = urlsplit(url)
        if parts.scheme != "s3" or not parts.netloc:
            raise UserError(f"The backend URL {url} is not an s3://bucket[/prefix] URL.")
        query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        plain = any(_true(query.get(name)) for name in _PLAIN_HTTP)
        endpoint = query.get("endpoint")
        if endpoint and "://" not in endpoint:
            endpoint = f"{'http' if plain else 'https'}://{endpoint}"
        return cls(
            bucket=parts.netloc,
            prefix=parts.path.strip("/"),
            region=query.get("region"),
            endpoint=endpoint,
            profile=query.get("profile"),
            path_style=any(_true(query.get(name)) for name in _PATH_STYLE),
        )

    def key(self, *names: str) -> str:
        return "/".join(p for p in (self.prefix, *names) if p)

    def client(self) -> S3Client:
        from botocore.config import Config

        access = AwsAccess(profile=self.profile, region=self.region, endpoint_url=self.endpoint)
        config = botocore_config(access)
        if self.path_style:
            config = config.merge(Config(s3={"addressing_style": "path"}))
        kwargs: dict[str, Any] = {"config": config}
        if self.endpoint:
            kwargs["endpoint_url"] = self.endpoint
        return build_session(access).client("s3", **kwargs)


def _true(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1", "yes")


class S3Document:
    """One object of the backend bucket, replaced only over the ETag last read."""

    def __init__(self, client: S3Client, bucket: str, key: str, limit: int = MAX_BYTES) -> None:
        self._client = client
        self._bucket = bucket
        self._key = key
        self._limit = limit

    @property
    def where(self) -> str:
        return f"s3://{self._bucket}/{self._key}"

    def read(self) -> Stored | None:
        try:
            answer = self._client.get_object(Bucket=self._bucket, Key=self._key)
            if answer["ContentLength"] > self._limit:
                raise UnreadableFile(
                    f"{self.where} is larger than {self._limit // (1024 * 1024)} MiB, more "
                    "than kubeshift reads; is it the right object?"
                )
            body = answer["Body"].read()
        except ClientError as exc:
            if _code(exc) in ("NoSuchKey", "404"):
                return None
            if _code(exc) in ("AccessDenied", "403"):
                raise UnreadableFile(
                    f"{self.where} cannot be read (AccessDenied): kubeshift needs s3:GetObject "
                    "on its prefix and s3:ListBucket on the bucket (docs/iam.md)."
                ) from None
            raise UnreadableFile(f"{self.where} cannot be read ({_code(exc)}).") from None
        except BotoCoreError as exc:
            raise UnreadableFile(f"{self.where} cannot be read ({exc}).") from None
        return Stored(body, answer["ETag"])

    def replace(self, body: bytes, expected: str | None) -> str:
        condition = {"IfNoneMatch": "*"} if expected is None else {"IfMatch": expected}
        try:
            answer = self._client.put_object(
                Bucket=self._bucket, Key=self._key, Body=body,
                ContentType="application/json", **condition,  # type: ignore[arg-type]
            )  # fmt: skip
        except (ClientError, BotoCoreError) as exc:
            raise self._failed("write", exc) from None
        return answer["ETag"]

    def delete(self, expected: str) -> None:
        try:
            self._client.delete_object(Bucket=self._bucket, Key=self._key, IfMatch=expected)
        except (ClientError, BotoCoreError) as exc:
            raise self._failed("remove", exc) from None

    def _failed(self, verb: str, exc: ClientError | BotoCoreError) -> Exception:
        """A lost race (:class:`VersionMoved`), or one sentence on why ``verb`` failed."""
        if isinstance(exc, ClientError):
            if _code(exc) in _MOVED:
                return VersionMoved(f"{self.where} changed since it was read")
            return UserError(f"kubeshift cannot {verb} {self.where} ({_code(exc)}).")
        return UserError(f"kubeshift cannot {verb} {self.where} ({exc}).")


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "")) or str(
        exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
    )

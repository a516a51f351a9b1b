"""kubeshift's documents in an S3 backend, against moto's S3 over HTTP: the backend URL
read as go-cloud reads it, conditional writes as S3 answers them, and two writers whose
requests are interleaved on purpose — one wins, the other is told."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.serving import make_server

from automation.aws.state_objects import S3Backend, S3Document
from automation.core.documents import VersionMoved
from automation.run.journal import Journal, StepStatus
from tests.support.moto_fixtures import MotoServer

BUCKET = "team-state"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("s3://b", S3Backend("b", "")),
        ("s3://b/teams/infra/?region=eu-west-1", S3Backend("b", "teams/infra", "eu-west-1")),
        (
            "s3://b?endpoint=127.0.0.1:9000&disableSSL=true&s3ForcePathStyle=true",
            S3Backend("b", "", endpoint="http://127.0.0.1:9000", path_style=True),
        ),
        (
            "s3://b?endpoint=minio.local&use_path_style=true&profile=ops",
            S3Backend("b", "", endpoint="https://minio.local", profile="ops", path_style=True),
        ),
    ],
)
def test_a_backend_url_is_read_as_go_cloud_reads_it(url: str, expected: S3Backend) -> None:
    assert S3Backend.parse(url) == expected


def _document(moto: MotoServer, key: str = ".kubeshift/p/s/journal.json") -> S3Document:
    client = moto.client("s3")
    if BUCKET not in {b["Name"] for b in client.list_buckets()["Buckets"]}:
        client.create_bucket(
            Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": moto.region}
        )
    url = f"s3://{BUCKET}?region={moto.region}&endpoint={moto.endpoint_url}&use_path_style=true"
    backend = S3Backend.parse(url)
    return S3Document(backend.client(), BUCKET, key)


def test_writes_succeed_only_over_the_version_read(moto: MotoServer) -> None:
    document = _document(moto)
    assert document.read() is None
    first = document.replace(b'{"n": 1}', None)
    with pytest.raises(VersionMoved):
        document.replace(b'{"n": 2}', None)  # If-None-Match: * on a key that exists
    second = document.replace(b'{"n": 2}', first)
    with pytest.raises(VersionMoved):
        document.replace(b'{"n": 3}', first)  # If-Match on a version replaced since
    with pytest.raises(VersionMoved):
        document.delete(first)
    stored = document.read()
    assert stored is not None and stored.body == b'{"n": 2}' and stored.version == second
    document.delete(second)
    assert document.read() is None
    with pytest.raises(VersionMoved):
        document.replace(b"{}", second)  # If-Match on a key that is gone: 404


def test_two_journal_writers_on_one_object_keep_each_others_records(moto: MotoServer) -> None:
    first, second = Journal(_document(moto), "s"), Journal(_document(moto), "s")
    first.start("p", "one")
    second.start("p", "two")
    first.finish("p", "one")
    second.finish("p", "two")
    records = Journal(_document(moto), "s").records()
    assert {(r.key, r.status) for r in records} == {
        ("p/one", StepStatus.SUCCEEDED),
        ("p/two", StepStatus.SUCCEEDED),
    }


class _Arrivals:
    """A WSGI app in front of the server's: counts requests as they arrive, before the
    server decides when to answer them."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self._app = app
        self._lock = threading.Lock()
        self.count = 0
        self.second = threading.Event()

    def __call__(self, environ: dict[str, Any], start: Callable[..., Any]) -> Any:
        if environ["REQUEST_METHOD"] == "PUT":
            with self._lock:
                self.count += 1
                if self.count == 2:
                    self.second.set()
        return self._app(environ, start)


def _race(
    moto: MotoServer, serve: Callable[[], Any], monkeypatch: pytest.MonkeyPatch,
    hold_first_until: Callable[[_Arrivals, threading.Event], threading.Event],
) -> list[str]:  # fmt: skip
    """Two creates of one key; the first is held between moto's check and its write
    until ``hold_first_until`` says; each writer's outcome."""
    from moto.s3.models import S3Backend as MotoS3

    server = serve()
    arrivals = _Arrivals(server.app)
    server.app = arrivals
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    first_in_write, second_in_write = threading.Event(), threading.Event()
    written = MotoS3.put_object
    calls = 0

    def held(backend: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            first_in_write.set()
            assert hold_first_until(arrivals, second_in_write).wait(30), "the race never formed"
        else:
            second_in_write.set()
        return written(backend, *args, **kwargs)

    monkeypatch.setattr(MotoS3, "put_object", held)
    endpoint = f"http://127.0.0.1:{server.server_port}"
    outcomes: list[str] = []
    try:
        _document(moto)  # the bucket, through the session's server
        documents = [
            S3Document(
                S3Backend.parse(f"s3://{BUCKET}?region={moto.region}&endpoint={endpoint}"
                                "&use_path_style=true").client(),
                BUCKET, "lock.json",
            )
            for _ in range(2)
        ]  # fmt: skip

        def create(document: S3Document, name: str) -> None:
            try:
                document.replace(name.encode(), None)
                outcomes.append("won")
            except VersionMoved:
                outcomes.append("refused")

        first = threading.Thread(target=create, args=(documents[0], "first"))
        first.start()
        assert first_in_write.wait(30), "the first create never reached moto's write"
        second = threading.Thread(target=create, args=(documents[1], "second"))
        second.start()
        first.join()
        second.join()
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
    return sorted(outcomes)


def test_the_sandbox_moto_answers_racing_creates_as_s3_does(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox's server answers one request at a time: the second create arrives
    while the first is between its check and its write, waits, and is refused."""
    from automation.sandbox.moto_server import MotoServer as Sandboxed

    def serve() -> Any:
        return Sandboxed()._server

    outcomes = _race(moto, serve, monkeypatch, lambda arrivals, _: arrivals.second)
    assert outcomes == ["refused", "won"]


def test_moto_as_shipped_lets_both_racing_creates_win(
    moto: MotoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lenient behaviour the sandbox closes: moto's own threaded server checks and
    writes without a lock, so a second create that checks while the first is held also
    finds the key absent, and both win."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )

    def serve() -> Any:
        app = DomainDispatcherApplication(create_backend_app)
        return make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)

    outcomes = _race(moto, serve, monkeypatch, lambda _, second_in_write: second_in_write)
    assert outcomes == ["won", "won"]

"""A moto server on 127.0.0.1 for the AWS tests: real HTTP, real botocore, no cloud.

One moto server (``automation.sandbox.moto_server``, one request at a time) serves the
whole session (it runs in this process, so tests may patch its in-process backends for
states moto never produces); its Route53 answers
as the sandbox's patched moto does (``moto_route53``). Every test that asks for
``moto`` starts from an empty account through ``POST /moto-api/reset``. The
environment carries fake credentials and ``AWS_ENDPOINT_URL``, so any boto3 client
built in the session — ours included — talks to the server and never to AWS.
"""

from __future__ import annotations

import logging
import os
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REGION = "eu-west-1"

_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_MAX_ATTEMPTS": "1",
    "AWS_RETRY_MODE": "standard",
    "MOTO_ACM_VALIDATION_WAIT": "0",
}


@dataclass(frozen=True)
class MotoServer:
    """Where the session's moto server listens, and how to talk to it."""

    endpoint_url: str
    region: str = REGION

    def reset(self) -> None:
        """Wipe every backend (about 80 ms); the server keeps running."""
        request = urllib.request.Request(f"{self.endpoint_url}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=10) as answer:
            if answer.status != 200:
                raise RuntimeError(f"moto reset answered {answer.status}")

    def client(self, service: str) -> Any:
        """A plain boto3 client for arranging a test's world (not the code under test's)."""
        import boto3

        return boto3.client(service, region_name=self.region, endpoint_url=self.endpoint_url)


@pytest.fixture(scope="session")
def moto_server() -> Iterator[MotoServer]:
    """Start one moto server for the session, with fake credentials in the environment."""
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as empty:
        for name, value in _ENV.items():
            patch.setenv(name, value)
        # Never read the developer's own profiles or credentials.
        patch.setenv("AWS_CONFIG_FILE", os.path.join(empty, "config"))
        patch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.path.join(empty, "credentials"))
        patch.delenv("AWS_PROFILE", raising=False)

        from automation.sandbox.moto_images import AMIS_VARIABLE, public_images

        patch.setenv(AMIS_VARIABLE, str(public_images(Path(empty))))

        from moto.route53.models import HostedZoneIdentifier, Route53Backend

        from automation.sandbox.moto_route53 import close_route53_gaps
        from automation.sandbox.moto_server import MotoServer as Serving  # after MOTO_ENV

        # Route53 as the sandbox's moto answers it (``moto_route53``), undone after.
        patch.setattr(
            Route53Backend,
            "change_resource_record_sets",
            Route53Backend.change_resource_record_sets,
        )
        patch.setattr(HostedZoneIdentifier, "generate", HostedZoneIdentifier.generate)
        close_route53_gaps()
        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access line per call

        server = Serving().start()
        endpoint = server.url
        patch.setenv("AWS_ENDPOINT_URL", endpoint)
        try:
            yield MotoServer(endpoint_url=endpoint)
        finally:
            server.stop()


@pytest.fixture
def moto(moto_server: MotoServer) -> MotoServer:
    """The session's moto server, reset to an empty account for this test."""
    moto_server.reset()
    return moto_server


@pytest.fixture
def metrics_gap_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process moto collects and disables a group's metrics as AWS does, for this
    test only (``moto_gaps.autoscaling.metrics_collection_adds_and_disables``)."""
    from moto.autoscaling.models import FakeAutoScalingGroup
    from moto.autoscaling.responses import AutoScalingResponse

    from automation.sandbox.moto_gaps.autoscaling import metrics_collection_adds_and_disables

    enable = FakeAutoScalingGroup.enable_metrics_collection
    monkeypatch.setattr(FakeAutoScalingGroup, "enable_metrics_collection", enable)
    monkeypatch.setattr(AutoScalingResponse, "disable_metrics_collection", None, raising=False)
    metrics_collection_adds_and_disables()

"""The program keeps the SDK's per-resource debug messages from the engine unless asked."""

from __future__ import annotations

import logging

import pulumi
import pytest

from automation.review.render import record
from components.sdk_debug import SDK_DEBUG_VAR, SDK_SENDS, quiet_sdk_debug


def _program() -> None:
    pulumi.ComponentResource("kubeshift:test:Thing", "thing")
    pulumi.log.info("said to the engine")


def _engine_messages(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    caplog.clear()
    with caplog.at_level(logging.DEBUG):
        record(_program)
    # the mocks' engine logs what it is sent on the root logger (asyncio has its own)
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "root"]


@pytest.fixture(autouse=True)
def _sdk_debug_as_shipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's own debug for each test (a render in this process quiets it), and
    whatever was there before restored afterwards."""
    monkeypatch.setattr(pulumi.log, "debug", SDK_SENDS)


def test_registrations_send_no_debug_messages_but_info_still_goes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sent = _engine_messages(caplog)
    assert any("registering resource" in text for level, text in sent if level == logging.DEBUG)

    quiet_sdk_debug({})

    sent = _engine_messages(caplog)
    assert [text for level, text in sent if level == logging.DEBUG] == []
    assert (logging.INFO, "said to the engine") in sent


def test_the_variable_keeps_them(caplog: pytest.LogCaptureFixture) -> None:
    quiet_sdk_debug({})
    quiet_sdk_debug({SDK_DEBUG_VAR: "1"})

    sent = _engine_messages(caplog)
    assert any("registering resource" in text for level, text in sent if level == logging.DEBUG)

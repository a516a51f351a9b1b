"""The Python SDK's debug messages, sent to the engine only when someone asks for them.

For every resource it registers, the SDK sends the engine four debug messages
("registering resource", "resource registration prepared", "... successful",
"beginning rpc"), each a blocking gRPC call made while the program waits; the engine
shows debug messages only to ``pulumi up --debug`` or ``-v``. Upstream cut most such
calls for this cost (pulumi/pulumi#7292, #7295); these four remain in the SDK kubeshift
pins. At 468 resources they took 2-3 s of every preview and update of
``vpc-move-example`` (a root-targeted update: 8.0 s without them against 10.9 s, medians
of 5). The program drops them unless ``KUBESHIFT_SDK_DEBUG`` is set; info, warnings and
errors go to the engine as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import pulumi

SDK_DEBUG_VAR = "KUBESHIFT_SDK_DEBUG"
SDK_SENDS = pulumi.log.debug
"""The SDK's own ``debug``, which sends each message to the engine."""


def _dropped(*_args: Any, **_kwargs: Any) -> None:
    """A debug message nobody reads."""


def quiet_sdk_debug(environ: Mapping[str, str] = os.environ) -> None:
    """Drop the SDK's debug messages in this process unless ``KUBESHIFT_SDK_DEBUG`` is
    set, in which case they are sent as the SDK sends them."""
    pulumi.log.debug = SDK_SENDS if environ.get(SDK_DEBUG_VAR) else _dropped

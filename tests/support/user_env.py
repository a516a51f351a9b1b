"""The environment a user's shell gives kubeshift, for commands the tests run as a user.

No AWS, Pulumi or kubeshift setting of the test session reaches the command (the moto
fixture's endpoint, a kubeconfig, a state directory), but where this machine keeps the
test binaries does: a cold run (``KUBESHIFT_TESTBIN_DIR`` at an empty cache, docs/testing.md)
must use the binaries it built, not whatever an earlier run left in the default cache.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

MACHINE = (
    "KUBESHIFT_TESTBIN_DIR",
    "KUBESHIFT_TESTBIN_BUILD",
    "KUBESHIFT_PULUMI_BIN_DIR",
    "KUBESHIFT_KWOK_LOG_LEVEL",
)
"""kubeshift's variables that say where this machine's binaries are, kept."""


def user_environment(state: Path) -> dict[str, str]:
    """This process's environment as a user's, kubeshift's state under ``state``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if (not k.startswith(("AWS_", "PULUMI_", "KUBESHIFT_")) or k in MACHINE)
        and k != "KUBECONFIG"
    }
    env["KUBESHIFT_STATE_DIR"] = str(state)
    return env


def aimed_at_sandbox(env: dict[str, str], exports: str) -> dict[str, str]:
    """``env`` after ``eval "$(kubeshift sandbox env)"``: ``exports`` is that command's
    output (``unset``, ``export`` and ``cd`` lines), applied as a shell applies them."""
    aimed = dict(env)
    for line in exports.splitlines():
        words = shlex.split(line)
        if words[:1] == ["unset"]:
            for name in words[1:]:
                aimed.pop(name, None)
        elif words[:1] == ["export"]:
            for assignment in words[1:]:
                name, _, value = assignment.partition("=")
                aimed[name] = value
    return aimed

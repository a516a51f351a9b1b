"""Install the stand-in as the ``aws`` plugin into the sandbox's own ``PULUMI_HOME``.

``pulumi plugin install resource aws <version> --file <launcher>`` copies a launcher
script that execs this Python with ``-m automation.sandbox.provider``. The home is the
sandbox's, never the user's ``~/.pulumi``, so a real pulumi-aws elsewhere is untouched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from automation.sandbox.provider.servicer import PLUGIN_VERSION

LAUNCHER = """#!/bin/sh
# kubeshift sandbox: STAND-IN for pulumi-aws over moto (never for real AWS).
exec {python} -m automation.sandbox.provider "$@"
"""


def plugin_dir(pulumi_home: Path) -> Path:
    return pulumi_home / "plugins" / f"resource-aws-v{PLUGIN_VERSION}"


def install(pulumi: Path, pulumi_home: Path, work: Path) -> Path:
    """Install (or reinstall when the launcher changed) and return the plugin directory."""
    launcher = work / "pulumi-resource-aws"
    text = LAUNCHER.format(python=sys.executable)
    target = plugin_dir(pulumi_home) / "pulumi-resource-aws"
    if target.is_file() and target.read_text() == text:
        return target.parent
    work.mkdir(parents=True, exist_ok=True)
    launcher.write_text(text)
    launcher.chmod(0o755)
    env = {**os.environ, "PULUMI_HOME": str(pulumi_home), "PULUMI_SKIP_UPDATE_CHECK": "true"}
    subprocess.run(
        [
            str(pulumi),
            "plugin",
            "install",
            "resource",
            "aws",
            PLUGIN_VERSION,
            "--file",
            str(launcher),
            "--reinstall",
        ],
        check=True,
        env=env,
        capture_output=True,
        text=True,
    )
    return target.parent

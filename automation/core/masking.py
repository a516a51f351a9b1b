"""Credentials a boot script may carry, masked before a line of it is shown.

A launch template's user data is the tool's own script, and some tools write secrets
into it: a kubeadm join token, an access key, a password in an ``export``. kubeshift
shows one line of a script where two scripts part (:mod:`automation.engine.property_paths`);
that line must not carry a credential to the terminal, a report or CI's log. The stack
file's own ``secure`` values are redacted elsewhere (:mod:`automation.core.secrets`); these
are values nobody marked, recognised by the names they are given and by the shapes of
well-known credentials.
"""

from __future__ import annotations

import re

MASK = "[masked]"

_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*(?:token|secret|passw(?:or)?d|credential|private[_-]?key|access[_-]?key"
    r"|api[_-]?key)[A-Za-z0-9_.-]*"
)
_ASSIGNED = re.compile(
    rf"(?P<name>{_SECRET_NAME})(?P<sep>\s*[=:]\s*)(?P<value>\"[^\"]*\"|'[^']*'|\S+)",
    re.IGNORECASE,
)
_FLAG = re.compile(
    rf"(?P<name>--{_SECRET_NAME})(?P<sep>\s+|=)(?P<value>\"[^\"]*\"|'[^']*'|[^\s-]\S*)",
    re.IGNORECASE,
)
_SHAPES = (
    re.compile(r"\b[a-z0-9]{6}\.[a-z0-9]{16}\b"),  # a kubeadm bootstrap token
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # an AWS access key id
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),  # a PEM private key's first line
)


def mask_credentials(line: str) -> str:
    """``line`` with every value that looks like a credential replaced by :data:`MASK`."""
    for pattern in (_FLAG, _ASSIGNED):
        line = pattern.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", line)
    for shape in _SHAPES:
        line = shape.sub(MASK, line)
    return line

"""The AWS SDK's failures, named here so that only ``aws/`` imports botocore.

A step or a session that must tell an AWS refusal from its own errors catches these;
``core.errors.from_client_error`` turns one into kubeshift's sentence.
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

AWS_ERRORS: tuple[type[Exception], ...] = (BotoCoreError, ClientError)
"""Every failure the SDK raises: a refusal by AWS, or none reaching it."""

__all__ = ["AWS_ERRORS", "BotoCoreError", "ClientError"]

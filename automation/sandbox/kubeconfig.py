"""Kubeconfig files for the test clusters (admin and per-component identities)."""

from __future__ import annotations

from pathlib import Path

import yaml

from automation.sandbox.pki import CertPair


def write_kubeconfig(
    path: Path, *, cluster: str, context: str, server: str, ca: Path, user: str, creds: CertPair
) -> Path:
    """A single-context kubeconfig authenticating with a client certificate."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": cluster, "cluster": {"server": server, "certificate-authority": str(ca)}}
        ],
        "users": [
            {
                "name": user,
                "user": {"client-certificate": str(creds.cert), "client-key": str(creds.key)},
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": cluster, "user": user}}],
        "current-context": context,
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    path.chmod(0o600)
    return path

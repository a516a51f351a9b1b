"""An HTTP(S) probe sent to a new endpoint before DNS points there.

A DNS cutover must prove the new target serves the record's site before the record
moves, and again after. DNS still names the old target at that moment, so the probe
connects to the new endpoint directly (a load balancer's DNS name or an address)
while presenting the record's own name in the ``Host`` header and as TLS SNI — what a
client will send once the record has moved. Certificates are checked against that
name unless verification is switched off.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator


class HttpProbe(BaseModel):
    """A request that must answer one of ``expected_status`` through the new endpoint."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(description="URL as clients use it, e.g. https://api.example.com/healthz.")
    connect_to: str | None = Field(
        default=None,
        description="host[:port] to connect to instead of the URL's host; None = the new target.",
    )
    expected_status: tuple[int, ...] = Field(default=(200,), min_length=1)
    timeout: float = Field(default=5.0, gt=0)
    verify_tls: bool = True
    ca_file: str | None = Field(
        default=None, description="PEM bundle to trust instead of the system's (private CAs)."
    )

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urlsplit(value)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ValueError(f"probe url must be http(s)://host/..., got {value!r}")
        return value


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    status: int | None
    message: str


def _split_host_port(value: str, default_port: int) -> tuple[str, int]:
    if value.startswith("["):  # [v6]:port
        host, _, rest = value[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else default_port
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, int(port)
    return value, default_port


def probe_http(probe: HttpProbe, connect_to: str | None = None) -> ProbeResult:
    """Send ``GET url`` to ``connect_to`` (or ``probe.connect_to``, or the URL's host)."""
    parts = urlsplit(probe.url)
    https = parts.scheme == "https"
    host = parts.hostname or ""
    port = parts.port or (443 if https else 80)
    where = probe.connect_to or connect_to
    address = _split_host_port(where, port) if where else (host, port)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host_header = host if parts.port is None else f"{host}:{parts.port}"
    via = f"{address[0]}:{address[1]}"
    try:
        sock = socket.create_connection(address, timeout=probe.timeout)
        if https:
            context = ssl.create_default_context(cafile=probe.ca_file)
            if not probe.verify_tls:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            sock = context.wrap_socket(sock, server_hostname=host)
        connection = http.client.HTTPConnection(host, port, timeout=probe.timeout)
        connection.sock = sock
        try:
            connection.request(
                "GET", path, headers={"Host": host_header, "User-Agent": "kubeshift-probe"}
            )
            status = connection.getresponse().status
        finally:
            connection.close()
    except (OSError, http.client.HTTPException) as exc:
        return ProbeResult(False, None, f"GET {probe.url} via {via} failed: {exc}")
    ok = status in probe.expected_status
    expected = "/".join(str(s) for s in probe.expected_status)
    verdict = "as expected" if ok else f"expected {expected}"
    return ProbeResult(ok, status, f"GET {probe.url} via {via} answered {status} ({verdict})")

"""The HTTP(S) probe against real local servers: Host and SNI carry the record's name."""

from __future__ import annotations

import datetime
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from automation.aws.probe import HttpProbe, probe_http
from tests.automation.aws.conftest import Site

NAME = "app.example.com"


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_site(tmp_path: Path) -> Iterator[tuple[str, Path, list[str | None]]]:
    """An HTTPS server on 127.0.0.1 with a certificate for app.example.com only."""
    cert, key = _self_signed(tmp_path, NAME)
    sni: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(204 if self.headers.get("Host") == NAME else 421)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return None

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda _sock, name, _ctx: sni.append(name)  # type: ignore[assignment,misc,func-returns-value]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", cert, sni
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_https_probe_verifies_the_records_name_on_the_new_endpoint(
    tls_site: tuple[str, Path, list[str | None]],
) -> None:
    address, cert, sni = tls_site
    probe = HttpProbe(url=f"https://{NAME}/healthz", expected_status=(204,), ca_file=str(cert))
    result = probe_http(probe, address)
    assert result.ok, result.message
    assert result.status == 204
    assert sni == [NAME]


def test_https_probe_refuses_an_untrusted_certificate(
    tls_site: tuple[str, Path, list[str | None]],
) -> None:
    address, _cert, _sni = tls_site
    probe = HttpProbe(url=f"https://{NAME}/healthz", expected_status=(204,))
    result = probe_http(probe, address)
    assert not result.ok
    assert "CERTIFICATE_VERIFY_FAILED" in result.message
    insecure = probe.model_copy(update={"verify_tls": False})
    assert probe_http(insecure, address).ok


def test_https_probe_refuses_a_certificate_for_another_name(
    tls_site: tuple[str, Path, list[str | None]],
) -> None:
    address, cert, _sni = tls_site
    probe = HttpProbe(url="https://other.example.com/", ca_file=str(cert))
    result = probe_http(probe, address)
    assert not result.ok and "other.example.com" in result.message


@pytest.mark.parametrize(
    ("url", "host"),
    [
        (f"http://{NAME}/healthz", NAME),
        (f"http://{NAME}:8080/healthz?deep=1", f"{NAME}:8080"),
    ],
    ids=["default-port", "explicit-port"],
)
def test_http_probe_sends_the_records_host(site: Site, url: str, host: str) -> None:
    result = probe_http(HttpProbe(url=url, connect_to=site.address))
    assert result.ok and site.hosts == [host]


def test_unreachable_endpoint_is_a_failed_probe() -> None:
    result = probe_http(HttpProbe(url=f"http://{NAME}/", timeout=0.5), "127.0.0.1:9")
    assert not result.ok and result.status is None
    assert result.message.startswith(f"GET http://{NAME}/ via 127.0.0.1:9 failed:")


@pytest.mark.parametrize("url", ["ftp://x/", "app.example.com/healthz"], ids=["ftp", "no-scheme"])
def test_probe_urls_must_be_http(url: str) -> None:
    with pytest.raises(ValueError, match="probe url must be http"):
        HttpProbe(url=url)

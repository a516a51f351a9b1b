"""Throw-away PKI for a test control plane: one CA, serving and client certificates.

A real apiserver authenticates its clients by certificate (``O=system:masters`` for the
admin, the well-known ``system:kube-*`` names for the components, so RBAC's default
bindings apply) and signs service-account tokens with its own key pair. Generating
these per cluster keeps clusters independent and the harness free of checked-in keys.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = dt.timedelta(days=2)


@dataclass(frozen=True)
class CertPair:
    """PEM files of one certificate and its private key."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class ClusterPki:
    """Every credential file one cluster's components need."""

    ca: CertPair
    serving: CertPair
    admin: CertPair
    controller_manager: CertPair
    scheduler: CertPair
    kwok: CertPair
    service_account_key: Path
    service_account_pub: Path


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _name(common_name: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _issue(
    directory: Path,
    stem: str,
    subject: x509.Name,
    ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None,
    *,
    server_names: tuple[str, ...] = (),
    server_ips: tuple[str, ...] = (),
    client: bool = False,
) -> tuple[CertPair, x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    issuer_name, signing_key = (ca[0].subject, ca[1]) if ca else (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=ca is None, path_length=None), critical=True)
    )
    if ca is None:
        usage = x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
            encipher_only=False, decipher_only=False,
        )  # fmt: skip
        builder = builder.add_extension(usage, critical=True)
        builder = builder.add_extension(
            x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
        )
    else:
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else [ExtendedKeyUsageOID.SERVER_AUTH]
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca[1].public_key()),
            critical=False,
        )
    if server_names or server_ips:
        sans: list[x509.GeneralName] = [x509.DNSName(n) for n in server_names]
        sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in server_ips]
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(signing_key, hashes.SHA256())
    pair = CertPair(directory / f"{stem}.crt", directory / f"{stem}.key")
    pair.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(pair.key, key)
    return pair, cert, key


def generate(directory: Path, cluster: str, service_ip: str) -> ClusterPki:
    """Write a complete PKI for ``cluster`` into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_pair, ca_cert, ca_key = _issue(directory, "ca", _name(f"kubeshift-{cluster}-ca"), None)
    ca = (ca_cert, ca_key)
    serving, _, _ = _issue(
        directory,
        "apiserver",
        _name("kube-apiserver"),
        ca,
        server_names=(
            "localhost",
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ),
        server_ips=("127.0.0.1", service_ip),
    )

    def client(stem: str, cn: str, org: str | None = None) -> CertPair:
        return _issue(directory, stem, _name(cn, org), ca, client=True)[0]

    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sa_key_path, sa_pub_path = directory / "sa.key", directory / "sa.pub"
    _write_key(sa_key_path, sa_key)
    sa_pub_path.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return ClusterPki(
        ca=ca_pair,
        serving=serving,
        admin=client("admin", "kubeshift-admin", "system:masters"),
        controller_manager=client("controller-manager", "system:kube-controller-manager"),
        scheduler=client("scheduler", "system:kube-scheduler"),
        kwok=client("kwok", "kubeshift-kwok", "system:masters"),
        service_account_key=sa_key_path,
        service_account_pub=sa_pub_path,
    )

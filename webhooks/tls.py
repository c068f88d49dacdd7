"""The serving certificate: TLS 1.2+, loaded from files and reloaded when they change on
disk (rotation without restart), or made at start-up with a CA of our own.

Reloading builds a fresh SSLContext from the new pair and, from then on, hands it to every
new handshake through the server context's SNI callback (called for every ClientHello, with
or without SNI). A half-written pair fails to load and the previous one keeps serving.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import os
import ssl
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

log = structlog.get_logger("topobridge.webhooks.tls")


def server_context(cert_file: str | os.PathLike[str], key_file: str | os.PathLike[str]) -> ssl.SSLContext:
    """A server context with TLS 1.2 as the floor; raises ssl.SSLError on a bad pair."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(cert_file, key_file)
    return ctx


def _fingerprint(*paths: Path) -> tuple[tuple[int, int, int], ...]:
    out = []
    for p in paths:
        st = p.stat()
        out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


class ReloadingCertificate:
    """Serves the newest certificate/key pair found in two files."""

    def __init__(self, cert_file: str | os.PathLike[str], key_file: str | os.PathLike[str]) -> None:
        self.cert_file, self.key_file = Path(cert_file), Path(key_file)
        self._seen = _fingerprint(self.cert_file, self.key_file)
        self.context = server_context(self.cert_file, self.key_file)
        """The context to serve with; it stays the same object across reloads."""
        self.context.sni_callback = self._pick
        self._current = self.context
        self.reloads = 0

    def _pick(self, sslobj: ssl.SSLObject, server_name: str | None, _ctx: ssl.SSLContext) -> None:
        if self._current is not _ctx:
            sslobj.context = self._current

    def reload_if_changed(self) -> bool:
        """Load the pair again if either file changed; True when a new pair now serves."""
        try:
            seen = _fingerprint(self.cert_file, self.key_file)
        except OSError as exc:  # mid-rotation: a file briefly missing
            log.warning("tls.reload_skipped", reason=str(exc))
            return False
        if seen == self._seen:
            return False
        try:
            fresh = server_context(self.cert_file, self.key_file)
        except (ssl.SSLError, OSError) as exc:
            log.warning("tls.reload_failed", cert=str(self.cert_file), reason=str(exc))
            return False  # keep _seen: retry on the next check
        self._current, self._seen = fresh, seen
        self.reloads += 1
        log.info("tls.reloaded", cert=str(self.cert_file), reloads=self.reloads)
        return True

    async def watch(self, interval: float) -> None:
        """Check the files every `interval` seconds, forever."""
        while True:
            await asyncio.sleep(interval)
            self.reload_if_changed()


@dataclass(frozen=True, slots=True)
class SelfSigned:
    """A CA and a serving certificate it signed, PEM-encoded."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    def write(self, directory: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
        """Write the serving pair (key readable by the owner only); returns (cert, key) paths."""
        d = Path(directory or tempfile.mkdtemp(prefix="topobridge-tls-"))
        cert, key = d / "tls.crt", d / "tls.key"
        cert.write_bytes(self.cert_pem)
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(self.key_pem)
        return cert, key


def generate_self_signed(
    hosts: Sequence[str], *, days: int = 365, common_name: str = "topobridge-webhook"
) -> SelfSigned:
    """A fresh CA and a serving certificate for `hosts` (DNS names and IP addresses as SANs;
    Go clients ignore the common name)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{common_name}-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for h in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            sans.append(x509.DNSName(h))
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return SelfSigned(
        ca_pem=ca.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )

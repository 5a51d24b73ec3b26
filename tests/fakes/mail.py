"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives."""

from __future__ import annotations

import email
import ipaddress
import re
import socket
import ssl
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import Message
from pathlib import Path

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

SMTP_PASSWORD = "smtp secret"  # the loopback server's test login


def self_signed_certificate(directory: Path) -> tuple[Path, ssl.SSLContext]:
    """A certificate for 127.0.0.1 (its PEM file) and a server context that presents it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file = directory / "smtp-cert.pem"
    key_file = directory / "smtp-key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    return cert_file, context


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Mailbox:
    """The mail an SMTP server received, and the logins it was offered."""

    port: int = 0
    mails: list[Message] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)

    def serve(self, *, tls: ssl.SSLContext | None = None, implicit: bool = False) -> Controller:
        """Listen on a free loopback port; stop() the result.

        With `tls`: STARTTLS, required before anything else (or TLS from the first
        byte when `implicit`). Without: AUTH is offered on the plain connection.
        """
        self.port = _free_port()
        options: dict[str, object] = {"authenticator": self._authenticate}
        if tls is None:
            options["auth_require_tls"] = False
        elif implicit:  # aiosmtpd offers AUTH only after its own STARTTLS unless told
            options.update(ssl_context=tls, auth_require_tls=False)
        else:
            options.update(tls_context=tls, require_starttls=True)
        controller = Controller(self, hostname="127.0.0.1", port=self.port, **options)
        controller.start()
        return controller

    async def handle_DATA(self, server, session, envelope) -> str:  # type: ignore[no-untyped-def]
        self.mails.append(email.message_from_bytes(envelope.content))
        return "250 OK"

    def _authenticate(self, server, session, envelope, mechanism, data) -> AuthResult:  # type: ignore[no-untyped-def]
        if isinstance(data, LoginPassword):
            self.logins.append((data.login.decode(), data.password.decode()))
            return AuthResult(success=data.password == SMTP_PASSWORD.encode())
        return AuthResult(success=False)

    def link(self, index: int = -1, *, base: str = "http://testserver.local") -> str:
        """The path of the reset link in a received mail."""
        body = self.mails[index].get_payload(decode=True)
        assert isinstance(body, bytes)
        text = body.decode()
        match = re.search(re.escape(base) + r"(/reset/[A-Za-z0-9_-]{43})\b", text)
        assert match, text
        return match.group(1)

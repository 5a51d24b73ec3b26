"""A real SMTP server on loopback (aiosmtpd) that keeps what it receives."""

from __future__ import annotations

import email
import re
import socket
from dataclasses import dataclass, field
from email.message import Message

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

SMTP_PASSWORD = "smtp secret"  # the loopback server's test login


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

    def serve(self) -> Controller:
        """Listen on a free loopback port (AUTH offered without TLS); stop() the result."""
        self.port = _free_port()
        controller = Controller(
            self,
            hostname="127.0.0.1",
            port=self.port,
            authenticator=self._authenticate,
            auth_require_tls=False,
        )
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

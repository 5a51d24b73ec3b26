"""TLS over a pinned connection: we dial the checked IP, SNI and the certificate use the name."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from app.egress import EgressConnectError
from tests.egress.conftest import MakeEgress, fixed_resolver
from tests.egress.servers import Reply, serve

NAME = "pinned.test"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A throw-away self-signed certificate for pinned.test only."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
         "-subj", f"/CN={NAME}", "-addext", f"subjectAltName=DNS:{NAME}"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def _contexts(certificate: tuple[Path, Path]) -> tuple[ssl.SSLContext, ssl.SSLContext, list[str]]:
    """Server and client contexts, and the SNI names the server is sent."""
    cert, key = certificate
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(cert, key)
    names: list[str] = []

    def remember(_sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        names.append(name or "")

    server.sni_callback = remember
    return server, ssl.create_default_context(cafile=str(cert)), names


async def test_https_to_a_pinned_address_verifies_the_hostname(
    make_egress: MakeEgress, certificate: tuple[Path, Path]
) -> None:
    server_tls, client_tls, names = _contexts(certificate)
    async with serve(Reply(body=b"secure"), tls=server_tls) as server:
        resolver = fixed_resolver({NAME: ["127.0.0.1"]})
        client = make_egress(
            resolver=resolver, ssl_context=client_tls, egress_allow=[f"{NAME}:{server.port}"]
        )
        fetched = await client.fetch(f"https://{NAME}:{server.port}/")
    assert fetched.content == b"secure"
    assert names == [NAME]
    assert resolver.calls == [NAME]  # type: ignore[attr-defined]


async def test_the_certificate_must_match_the_name_not_the_dialled_ip(
    make_egress: MakeEgress, certificate: tuple[Path, Path]
) -> None:
    server_tls, client_tls, _ = _contexts(certificate)
    async with serve(Reply(body=b"secure"), tls=server_tls) as server:
        client = make_egress(ssl_context=client_tls, egress_allow=[f"127.0.0.1:{server.port}"])
        with pytest.raises(EgressConnectError, match=r"CERTIFICATE_VERIFY_FAILED|match"):
            await client.fetch(f"https://127.0.0.1:{server.port}/")
    assert server.requests == []


async def test_a_kept_alive_tls_connection_serves_the_next_request_to_its_name(
    make_egress: MakeEgress, certificate: tuple[Path, Path]
) -> None:
    server_tls, client_tls, names = _contexts(certificate)
    async with serve(Reply(body=b"secure"), tls=server_tls, keep_alive=10) as server:
        resolver = fixed_resolver({NAME: ["127.0.0.1"]})
        client = make_egress(
            resolver=resolver, ssl_context=client_tls, egress_allow=[f"{NAME}:{server.port}"]
        )
        first = await client.fetch(f"https://{NAME}:{server.port}/one")
        second = await client.fetch(f"https://{NAME}:{server.port}/two")
    assert (first.content, second.content) == (b"secure", b"secure")
    assert [seen.target for seen in server.requests] == ["/one", "/two"]
    assert (server.connections, names) == (1, [NAME])

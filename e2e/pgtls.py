"""A TLS front for the lane's PostgreSQL, so clients connect with ``sslmode=verify-full``.

The embedded server (tests/pg_server.py) is built without SSL, but the program's providers
connect with ``sslmode=verify-full`` and an ``sslrootcert``. The front listens on loopback and
speaks the start of PostgreSQL's protocol the server would (PostgreSQL 18 docs, "Frontend/Backend
Protocol", 54.2.10 "SSL Session Encryption" and 54.2.11 "GSSAPI Session Encryption"; message
formats in 54.7, ``SSLRequest`` and ``GSSENCRequest``):

- a ``GSSENCRequest`` (length 8, code 80877104) is answered ``N`` (no GSSAPI encryption); the
  client then sends its next request on the same connection;
- an ``SSLRequest`` (length 8, code 80877103) is answered ``S``, then the TLS handshake runs
  with a certificate for ``localhost`` and ``127.0.0.1`` issued by the lane's own CA
  (:func:`make_ca`), and the decrypted stream (the ``StartupMessage`` and everything after it)
  is forwarded to the plain server, whose authentication (SCRAM) runs unchanged inside TLS;
- anything else (a client that does not ask for TLS) is refused: the connection is closed, as
  a server whose ``pg_hba.conf`` has only ``hostssl`` lines would refuse it (managed servers
  that force TLS: RDS ``rds.force_ssl``).

A client that trusts another CA, or names another host, fails its own verification
(libpq ``sslmode=verify-full``: the chain to ``sslrootcert`` and the host name).
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import select
import socket
import ssl
import struct
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
LOOPBACK = "127.0.0.1"
HOSTNAME = "localhost"


@dataclass(frozen=True)
class Authority:
    """A CA and a server certificate it issued for ``localhost``/``127.0.0.1`` (PEM)."""

    ca_pem: str
    cert_pem: str
    key_pem: str


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_ca(common_name: str = "hypershell e2e PostgreSQL CA") -> Authority:
    """A new CA and a server certificate for the front, valid for a day."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(HOSTNAME))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName(HOSTNAME), x509.IPAddress(ipaddress.ip_address(LOOPBACK))]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return Authority(
        ca_pem=ca.public_bytes(pem).decode(),
        cert_pem=cert.public_bytes(pem).decode(),
        key_pem=key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode(),
    )


def _recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed during the start-up")
        data += chunk
    return data


class Front:
    """The listener (``port`` on 127.0.0.1) in front of the plain server at ``backend``."""

    def __init__(self, backend_port: int, authority: Authority) -> None:
        self.backend_port = backend_port
        self.authority = authority
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        with tempfile.TemporaryDirectory() as folder:
            chain, key = Path(folder) / "chain.pem", Path(folder) / "key.pem"
            chain.write_text(authority.cert_pem + authority.ca_pem)
            key.write_text(authority.key_pem)
            self.context.load_cert_chain(chain, key)
        self.listener = socket.create_server((LOOPBACK, 0))
        self.port: int = self.listener.getsockname()[1]
        self.connections = 0
        """Connections that completed the TLS handshake (for the tests' figures)."""
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="pgtls-accept", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with contextlib.ExitStack() as stack:
            stack.enter_context(client)
            try:
                length, code = struct.unpack("!ii", _recv_exactly(client, 8))
                if length == 8 and code == GSSENC_REQUEST:
                    client.sendall(b"N")
                    length, code = struct.unpack("!ii", _recv_exactly(client, 8))
                if length != 8 or code != SSL_REQUEST:
                    return  # no TLS asked for: refused (module docstring)
                client.sendall(b"S")
                tls = stack.enter_context(self.context.wrap_socket(client, server_side=True))
                self.connections += 1
                backend = stack.enter_context(
                    socket.create_connection((LOOPBACK, self.backend_port), timeout=30)
                )
                backend.settimeout(None)
                self._pump(tls, backend)
            except (OSError, ConnectionError, ssl.SSLError, struct.error):
                return

    @staticmethod
    def _pump(tls: ssl.SSLSocket, plain: socket.socket) -> None:
        """Copy both ways until either side closes (TLS records already decrypted and
        buffered are drained first: ``pending``)."""
        while True:
            ready = [tls] if tls.pending() else select.select([tls, plain], [], [], 60)[0]
            for source in ready:
                data = source.recv(65536)
                if not data:
                    return
                (plain if source is tls else tls).sendall(data)

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self._thread.join(timeout=5)


@contextlib.contextmanager
def running(backend_port: int, authority: Authority | None = None) -> Iterator[Front]:
    front = Front(backend_port, authority or make_ca())
    try:
        yield front
    finally:
        front.close()

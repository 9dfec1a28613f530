"""The secrets a declaration's ``spec.rotation`` rotates (:class:`.counters.RotationSpec`): each
one's name on the command line (``gatewayctl rotate``), its counter's key, and in one line what
a rotation replaces and what clients must do (the diff's Risks tell the whole story)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Secret:
    name: str
    """As the command line names it: ``server-certificate``."""
    key: str
    """Its counter's key under ``spec.rotation``: ``serverCertificate``."""
    means: str
    """What a rotation replaces, and what clients must do."""

    @property
    def field(self) -> str:
        return f"spec.rotation.{self.key}"


SECRETS: tuple[Secret, ...] = (
    Secret(
        name="database-password",
        key="databasePassword",
        means="a new PostgreSQL password; its Secret follows and the gateway pods roll;"
        " clients change nothing",
    ),
    Secret(
        name="server-certificate",
        key="serverCertificate",
        means="a new server key and certificate from the same CA; the pods roll; clients"
        " change nothing",
    ),
    Secret(
        name="client-certificate",
        key="clientCertificate",
        means="a new client key and certificate in openshell-client-tls; whoever copied the"
        " old pair takes the new one",
    ),
    Secret(
        name="ca",
        key="ca",
        means="a new tenant CA and both certificates it signs; every client must trust the"
        " new CA (ca.crt) before it connects again",
    ),
    Secret(
        name="kek",
        key="kek",
        means="a new KEK; the credentials the gateway's users stored cannot be decrypted"
        " again: they are lost and must be stored again",
    ),
    Secret(
        name="console-cookie",
        key="consoleCookie",
        means="a new console cookie secret; everyone signed in to the console signs in again",
    ),
)
BY_NAME = {s.name: s for s in SECRETS}
BY_KEY = {s.key: s for s in SECRETS}

CERTIFICATES = {
    "server-cert": BY_NAME["server-certificate"],
    "client-cert": BY_NAME["client-certificate"],
    "ca": BY_NAME["ca"],
}
"""The tls certificates of a gateway's ``<gateway>-pki`` component by their name's suffix
(``components/pki.py``, ``Pki``: ``<pki>-ca``, ``<pki>-server-cert``, ``<pki>-client-cert``),
and the counter that reissues each."""
PKI_SUFFIX = "-pki-"


def for_certificate(gateway: str, certificate: str) -> Secret | None:
    """The secret whose rotation reissues ``certificate`` (a resource name) of ``gateway``;
    None for a certificate the program does not make so."""
    prefix = f"{gateway}{PKI_SUFFIX}"
    if not certificate.startswith(prefix):
        return None
    return CERTIFICATES.get(certificate.removeprefix(prefix))

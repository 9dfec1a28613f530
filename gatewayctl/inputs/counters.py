"""The declaration's ``spec.rotation``: one counter per secret a gateway holds
(:mod:`gatewayctl.inputs.rotation_secrets` names them; kept apart so ``--help`` loads no model)."""

from __future__ import annotations

from pydantic import Field

from gatewayctl.inputs.model import Model


class RotationSpec(Model):
    """Counters, one per secret the gateway holds: raising one by a pull request makes the
    next ``pulumi up`` replace that secret (docs/running.md, "Rotating keys"). 0 (the default)
    never rotated; a counter never goes down (a lower value would rotate again, not restore)."""

    database_password: int = Field(0, ge=0, alias="databasePassword")
    """The PostgreSQL role's password (the credentials Secret follows; the pod rolls)."""
    server_certificate: int = Field(0, ge=0, alias="serverCertificate")
    """The server's key and certificate (same CA: clients change nothing)."""
    client_certificate: int = Field(0, ge=0, alias="clientCertificate")
    """The client's key and certificate in ``openshell-client-tls``."""
    ca: int = Field(0, ge=0)
    """The tenant CA and both leaf certificates: clients must trust the new CA."""
    kek: int = Field(0, ge=0)
    """The default driver's KEK: the credentials encrypted with the old key are lost."""
    console_cookie: int = Field(0, ge=0, alias="consoleCookie")
    """oauth2-proxy's cookie secret: everyone signed in to the console signs in again."""

"""The resolved stack: what resolution hands the engine and the operations, every decision
made (a gateway's component args and what only the tooling reads, the stack's releases and
CA bundles). Plain data; the rules that build it live beside it in ``gatewayctl.resolve``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from components.credentials import GatewayCredentials
from components.gateway_types import GatewayArgs
from components.hostnames import grpcs_address
from components.ingress import IngressMode
from gatewayctl.inputs.clusters import ClusterConfig, StackConfig
from gatewayctl.inputs.release_files import ReleaseFile
from gatewayctl.inputs.signin import KeycloakImportIds

SignIn = Literal["keycloak", "oidc", "none", "unset"]
"""How people sign in to a gateway (``gatewayctl.resolve.signin_plan`` decides it)."""


@dataclass(frozen=True, kw_only=True)
class ClusterBundles:
    trusted: str | None
    """``trustedCaBundleFile``'s PEM, for ConfigMap ``gateway-trusted-ca``."""
    keycloak: str | None
    """``identity.keycloak.caBundleFile``'s PEM, for the Keycloak provider."""


@dataclass(frozen=True, kw_only=True)
class ResolvedGateway:
    """A declaration with every stack-level decision made: the ``Gateway`` component's args,
    and what only the tooling reads."""

    name: str
    source: str
    """The declaration file, as problems name it."""
    adopted: bool
    """The declaration names an existing namespace (``spec.namespace``): an adoption."""
    ingress_mode: IngressMode
    """The cluster's resolved mode, for reports (the component reads ``args.exposure``)."""
    args: GatewayArgs
    """The input of the gateway's ``Gateway`` component."""
    release: str | None = None
    """The release its images come from (its own ``spec.release``, else its cluster's)."""
    release_pinned: bool = False
    """The release is the gateway's own pin (``spec.release``), not its cluster's binding."""
    image_overrides: tuple[str, ...] = ()
    """The images the declaration sets itself (``spec.images``), in place of the release's."""
    sign_in: SignIn = "unset"
    """How people sign in (``gatewayctl.resolve.signin_plan``); the args carry what the component
    needs."""
    keycloak_import_ids: KeycloakImportIds | None = None
    """Keycloak's ids of an adopted gateway's client and roles, for ``import-file``."""
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """The declaration's free labels (``metadata.labels``): rollout waves select by them."""

    @property
    def cluster(self) -> str:
        return self.args.cluster

    @property
    def namespace(self) -> str:
        return self.args.namespace

    @property
    def database_name(self) -> str:
        return self.args.database_name

    @property
    def hostname(self) -> str | None:
        """The external host, None when the gateway is not exposed."""
        return self.args.exposure.host

    @property
    def address(self) -> str | None:
        return grpcs_address(self.hostname) if self.hostname else None

    @property
    def credentials(self) -> GatewayCredentials:
        return self.args.credentials

    @property
    def console_host(self) -> str | None:
        """The web console's external host, None without one or when it is not exposed."""
        return self.args.console.exposure.host if self.args.console is not None else None


@dataclass(frozen=True, kw_only=True)
class LoadedStack:
    name: str
    config_path: str
    config: StackConfig
    gateways: tuple[ResolvedGateway, ...]
    releases: Mapping[str, ReleaseFile] = dataclasses.field(default_factory=dict)
    """Every release of the project (``releases/``), by name."""
    bundles: Mapping[str, ClusterBundles] = dataclasses.field(default_factory=dict)
    """Each cluster's CA bundles (PEM text), read from the project."""

    def cluster(self, name: str) -> ClusterConfig:
        return self.config.clusters[name]

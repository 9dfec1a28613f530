"""The namespaces of in-cluster services the stacks and declarations name (issue 42 item 1):
a database, a Keycloak, a Vault, an issuer reached by a Service address reserve their
namespace, in every spelling a pod's resolver accepts, for a gateway's namespace and for its
credential store (``gatewayctl.inputs.reserved.service_namespace``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gatewayctl.inputs.reserved import service_namespace, url_namespace
from tests.builders import cluster, one_cluster, write_gateway, write_stack
from tests.helpers import load_problems, only_gateway

OWN = "a gateway needs its own"
GRANTED = "the gateway would be granted every Secret in it"


@pytest.mark.parametrize(
    "host",
    [
        "vault.secrets",
        "vault.secrets.svc",
        "vault.secrets.svc.cluster.local",
        "vault.secrets.svc.cluster.local.",
        "vault.secrets.",
        "Vault.SECRETS.Svc.Cluster.Local",
        "vault-0.vault.secrets.svc.cluster.local",
        "vault-0.vault.secrets.svc",
    ],
)
def test_every_spelling_a_pod_resolves_in_the_cluster_names_its_namespace(host: str) -> None:
    assert service_namespace(host) == "secrets"


@pytest.mark.parametrize(
    "host",
    [
        "vault",
        "vault.example.com",
        "vault.secrets.svc.example.com",
        "secrets.svc.cluster.local",
        "a.b.c.d.svc.cluster.local",
        "vault..svc",
        "-x.secrets",
    ],
)
def test_names_no_pod_resolves_in_the_cluster_name_no_namespace(host: str) -> None:
    assert service_namespace(host) is None


def test_a_urls_host_names_the_namespace_whatever_its_port_and_path() -> None:
    assert url_namespace("https://Keycloak.SSO.svc:8443/auth") == "sso"
    assert url_namespace("http://vault.secrets:8200") == "secrets"
    assert url_namespace("https://sso.example.com/realms/r") is None


def keycloak_cluster(url: str, **more: str) -> dict[str, Any]:
    keycloak = {"url": url, "realm": "hypershell", "adminClientId": "provisioner", **more}
    return {"c1": cluster(identity={"keycloak": keycloak})}


KEYCLOAK_SECRETS = {"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}}


@pytest.mark.parametrize(
    ("field", "url", "extra"),
    [
        ("identity.keycloak.url", "https://keycloak.sso.svc:8443", {}),
        ("identity.keycloak.url", "https://KEYCLOAK.sso.svc.cluster.local", {}),
        (
            "identity.keycloak.issuerUrl",
            "https://keycloak.sso/realms/hypershell",
            {"issuerUrl": "https://keycloak.sso/realms/hypershell"},
        ),
    ],
    ids=["url-svc", "url-cluster-local-upper", "issuer-short"],
)
def test_namespace_of_an_in_cluster_keycloak_is_refused(
    tmp_path: Path, field: str, url: str, extra: dict[str, str]
) -> None:
    base = "https://sso.example.com" if extra else url
    write_stack(tmp_path, clusters=keycloak_cluster(base, **extra), secrets=KEYCLOAK_SECRETS)
    source = write_gateway(tmp_path, "team-a", {"namespace": "sso"})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            f"'sso' is the namespace of the Keycloak service {url!r} of cluster 'c1' ({field});"
            f" {OWN}",
        )
    ]


def test_namespace_of_a_database_named_in_the_short_form_is_refused(tmp_path: Path) -> None:
    write_stack(tmp_path, clusters=one_cluster(database={"host": "postgres.db"}))
    source = write_gateway(tmp_path, "team-a", {"namespace": "db"})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            "'db' is the namespace of the database service 'postgres.db' of cluster 'c1'"
            f" (database.host); {OWN}",
        )
    ]


def vault_spec(address: str) -> dict[str, Any]:
    return {"credentials": {"driver": "vault", "vault": {"address": address, "role": "r"}}}


@pytest.mark.parametrize(
    "address",
    [
        "http://vault.secrets:8200",
        "https://vault.secrets.svc",
        "http://VAULT.Secrets.svc.cluster.local:8200",
    ],
)
def test_namespace_of_a_vault_another_declaration_names_is_refused(
    tmp_path: Path, address: str
) -> None:
    write_stack(tmp_path)
    named = write_gateway(tmp_path, "team-a", vault_spec(address))
    source = write_gateway(tmp_path, "team-b", {"namespace": "secrets"})

    assert load_problems(tmp_path) == [
        (
            source,
            "spec.namespace",
            f"'secrets' is the namespace of the Vault service {address!r}"
            f" ({named}: spec.credentials.vault.address); {OWN}",
        )
    ]


def test_a_credential_store_in_an_in_cluster_services_namespace_is_refused(
    tmp_path: Path,
) -> None:
    write_stack(
        tmp_path, clusters=keycloak_cluster("https://keycloak.sso.svc"), secrets=KEYCLOAK_SECRETS
    )
    issuer = "https://idp.login.svc/realms/x"
    named = write_gateway(tmp_path, "team-a", {"oidc": {"issuer": issuer}})
    stores = {"driver": "kubernetes-secrets"}
    first = write_gateway(
        tmp_path, "team-b", {"credentials": stores | {"kubernetesSecrets": {"namespace": "sso"}}}
    )
    second = write_gateway(
        tmp_path, "team-c", {"credentials": stores | {"kubernetesSecrets": {"namespace": "login"}}}
    )

    field = "spec.credentials.kubernetesSecrets.namespace"
    assert load_problems(tmp_path) == [
        (
            first,
            field,
            "'sso' is the namespace of the Keycloak service 'https://keycloak.sso.svc' of"
            f" cluster 'c1' (identity.keycloak.url); {GRANTED}",
        ),
        (
            second,
            field,
            f"'login' is the namespace of the issuer service {issuer!r}"
            f" ({named}: spec.oidc.issuer); {GRANTED}",
        ),
    ]


def test_an_external_keycloak_and_vault_reserve_nothing(tmp_path: Path) -> None:
    write_stack(
        tmp_path, clusters=keycloak_cluster("https://sso.example.com"), secrets=KEYCLOAK_SECRETS
    )
    write_gateway(
        tmp_path, "team-a", {"namespace": "example"} | vault_spec("https://vault.example.com")
    )

    assert only_gateway(tmp_path).namespace == "example"

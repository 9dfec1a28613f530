"""Endpoints in one normal form for every uniqueness rule (issue 42 item 2): a Keycloak realm
or a Vault server written another way (an explicit default port, upper case, a trailing slash
or dot) is the same endpoint, so no rule keyed by it is passed by spelling the URL otherwise
(``components.hostnames.endpoint``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.hostnames import endpoint
from gatewayctl.inputs import stackfile
from gatewayctl.inputs.signin import KeycloakServer
from gatewayctl.resolve import inventory
from gatewayctl.resolve.signin_plan import realm_of
from tests.builders import cluster, write_gateway, write_stack


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("https://sso.example.com", "https://sso.example.com"),
        ("https://sso.example.com:443", "https://sso.example.com"),
        ("HTTPS://SSO.Example.COM:443/", "https://sso.example.com"),
        ("https://sso.example.com./auth//", "https://sso.example.com/auth"),
        ("https://sso.example.com:8443/auth", "https://sso.example.com:8443/auth"),
        ("http://vault.example.com:80", "http://vault.example.com"),
        ("http://vault.example.com:443", "http://vault.example.com:443"),
        ("https://[2001:DB8::1]:443/v1", "https://[2001:db8::1]/v1"),
        ("https://user:pw@sso.example.com?q=1#f", "https://sso.example.com"),
    ],
)
def test_one_normal_form_of_an_endpoint(url: str, normal: str) -> None:
    assert endpoint(url) == normal


def test_a_realm_is_one_realm_whatever_the_spelling_of_its_server() -> None:
    def realm(url: str) -> tuple[str, str]:
        server = KeycloakServer.model_validate(
            {"url": url, "realm": "hypershell", "adminClientId": "p"}, by_alias=True
        )
        return realm_of(server)

    expected = ("https://sso.example.com", "hypershell")
    assert realm("https://sso.example.com:443") == expected
    assert realm("https://SSO.example.com/") == expected
    assert realm("https://sso.example.com:8443") == ("https://sso.example.com:8443", "hypershell")


def _keycloak_stack(root: Path, stack: str, url: str, admin: str) -> str:
    server = {"url": url, "realm": "hypershell", "adminClientId": admin}
    own: dict[str, Any] = {
        "kubeconfigContext": f"ctx-{stack}",
        "baseDomain": f"{stack}.example.com",
        "database": {"adminHost": f"db-{stack}.example.com"},
        "identity": {"keycloak": server},
    }
    return write_stack(
        root,
        stack=stack,
        clusters={"c1": cluster(**own)},
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}},
    )


def test_a_client_id_cannot_be_taken_across_stacks_by_an_explicit_default_port(
    tmp_path: Path,
) -> None:
    a = _keycloak_stack(tmp_path, "a", "https://sso.example.com", "provisioner")
    _keycloak_stack(tmp_path, "b", "https://SSO.example.com:443/", "provisioner-b")
    first = write_gateway(tmp_path, "alpha", stack="a")
    second = write_gateway(
        tmp_path, "beta", {"keycloak": {"clientId": "openshell-alpha"}}, stack="b"
    )
    third = write_gateway(tmp_path, "gamma", {"keycloak": {"clientId": "provisioner"}}, stack="b")

    problems = inventory.coverage_problems(tmp_path, stackfile.all_stacks(tmp_path))

    assert sorted((p.path, p.field, p.message) for p in problems if p.path != first) == [
        (
            second,
            "spec.keycloak.clientId",
            f"client 'openshell-alpha' of realm 'hypershell' is also used by {first} (cluster"
            f" 'c1' of {a}, on the same Keycloak realm)",
        ),
        (
            third,
            "spec.keycloak.clientId",
            "client 'provisioner' of realm 'hypershell' is the admin client Pulumi signs in"
            f" with for {a} (identity.keycloak.adminClientId of cluster 'c1'); the gateway would"
            " take it over, and deleting the gateway would delete it",
        ),
    ]

"""Sign-in per gateway (issue 12): the Identity component, the OIDC table, the trusted CA, the
Keycloak provider per server, and the resolution of each gateway's sign-in."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pulumi
import pytest

from components.gateway import Gateway
from components.gateway_config import OidcSettings, oidc_table
from components.gateway_types import GatewayArgs
from components.identity_types import IdentityArgs, Principal, grants, principal_suffix, server_key
from components.trusted_ca import MOUNT_PATH
from components.workload import config_hash
from gatewayctl.engine import offline
from gatewayctl.engine.offline import Recording, is_secret, run_program
from gatewayctl.engine.placeholders import GET_GROUP, invoke_answer, keycloak_id
from gatewayctl.resolve.signin_plan import default_client_id
from tests.builders import (
    CONFIG_FILE,
    DECLARATIONS,
    PREFIX,
    cluster,
    write_gateway,
    write_stack,
    write_text,
)
from tests.helpers import k8s, load, load_problems, one, only_gateway
from tests.test_components import BASE_ARGS, NS, build

CLIENT = "keycloak:openid/client:Client"
ROLE = "keycloak:index/role:Role"
GROUP_ROLES = "keycloak:index/groupRoles:GroupRoles"
USER_ROLES = "keycloak:index/userRoles:UserRoles"
ISSUER = "https://sso.example.com/realms/hypershell"
PEM = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2E=\n-----END CERTIFICATE-----\n"
KEYCLOAK = {
    "url": "https://sso.example.com",
    "realm": "hypershell",
    "adminClientId": "provisioner",
}
OIDC = OidcSettings(
    issuer=ISSUER,
    audience="openshell-acme",
    roles_claim="hypershell.roles",
    admin_role="openshell-admin",
    user_role="openshell-user",
)
ADMINS = Principal(kind="group", name="/platform/admins")
TEAM = Principal(kind="group", name="/team a")
IDENTITY = IdentityArgs(
    realm="hypershell",
    client_id="openshell-acme",
    issuer=ISSUER,
    admins=(Principal(kind="group", name="/platform/admins"), Principal(kind="user", name="alice")),
    users=(Principal(kind="group", name="/team a"), Principal(kind="user", name="alice")),
)


def keycloak_build(args: GatewayArgs) -> Recording:
    def program() -> Any:
        import pulumi_keycloak as keycloak

        provider = keycloak.Provider(
            "kc", url="https://sso.example.com", realm="hypershell", client_id="p"
        )
        Gateway("acme", replace(args, keycloak_provider=provider))
        return None

    recording, _ = run_program(program, project="p", stack="s")
    return recording


def by_type(recording: Recording, type_: str) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in recording.resources.values() if r.type == type_}


# --- the Keycloak client and its parts -------------------------------------------------------


def test_the_client_is_public_with_pkce_device_grant_loopback_redirects_and_no_full_scope() -> None:
    recording = keycloak_build(replace(BASE_ARGS, oidc=OIDC, identity=IDENTITY))
    assert one(recording, CLIENT, "acme-identity-client").inputs == {
        "realmId": "hypershell",
        "clientId": "openshell-acme",
        "name": "openshell-acme",
        "enabled": True,
        "accessType": "PUBLIC",
        "standardFlowEnabled": True,
        "directAccessGrantsEnabled": True,
        "implicitFlowEnabled": False,
        "serviceAccountsEnabled": False,
        "fullScopeAllowed": False,
        "validRedirectUris": ["http://127.0.0.1:*", "http://localhost:*"],
        "pkceCodeChallengeMethod": "S256",
        "oauth2DeviceAuthorizationGrantEnabled": True,
    }
    scopes = one(
        recording,
        "keycloak:openid/clientDefaultScopes:ClientDefaultScopes",
        "acme-identity-client-scopes",
    )
    assert scopes.inputs["defaultScopes"] == ["profile", "email", "roles", "web-origins", "acr"]
    assert scopes.inputs["clientId"] == "acme-identity-client-id"  # Keycloak's id of the client


def test_two_client_roles_and_three_mappers_on_the_client() -> None:
    recording = keycloak_build(replace(BASE_ARGS, oidc=OIDC, identity=IDENTITY))
    assert {n: (i["name"], i["clientId"]) for n, i in by_type(recording, ROLE).items()} == {
        "acme-identity-admin-role": ("openshell-admin", "acme-identity-client-id"),
        "acme-identity-user-role": ("openshell-user", "acme-identity-client-id"),
    }
    audience = one(
        recording,
        "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper",
        "acme-identity-audience",
    ).inputs
    assert (audience["includedClientAudience"], audience["addToAccessToken"]) == (
        "openshell-acme",
        True,
    )
    assert audience["addToIdToken"] is False
    sub = one(recording, "keycloak:openid/subProtocolMapper:SubProtocolMapper", "acme-identity-sub")
    assert sub.inputs["addToAccessToken"] is True
    roles = one(
        recording,
        "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper",
        "acme-identity-roles-claim",
    ).inputs
    assert (roles["claimName"], roles["multivalued"], roles["clientIdForRoleMappings"]) == (
        "hypershell.roles",
        True,
        "openshell-acme",
    )


def test_each_principal_gets_one_non_exhaustive_mapping_with_exactly_its_roles() -> None:
    recording = keycloak_build(replace(BASE_ARGS, oidc=OIDC, identity=IDENTITY))
    admin, user = "acme-identity-admin-role-id", "acme-identity-user-role-id"
    groups = by_type(recording, GROUP_ROLES)
    users = by_type(recording, USER_ROLES)
    assert groups == {
        f"acme-identity-access-{principal_suffix(ADMINS)}": {
            "realmId": "hypershell",
            "groupId": keycloak_id("group", "hypershell", "/platform/admins"),
            "roleIds": [admin, user],
            "exhaustive": False,
        },
        f"acme-identity-access-{principal_suffix(TEAM)}": {
            "realmId": "hypershell",
            "groupId": keycloak_id("group", "hypershell", "/team a"),
            "roleIds": [user],
            "exhaustive": False,
        },
    }
    # alice is both an admin and a user: one mapping with both roles.
    assert list(users.values()) == [
        {
            "realmId": "hypershell",
            "userId": keycloak_id("user", "hypershell", "alice"),
            "roleIds": [admin, user],
            "exhaustive": False,
        }
    ]


def test_removing_a_principal_removes_exactly_its_mapping() -> None:
    before = keycloak_build(replace(BASE_ARGS, oidc=OIDC, identity=IDENTITY))
    fewer = replace(IDENTITY, users=(Principal(kind="user", name="alice"),))
    after = keycloak_build(replace(BASE_ARGS, oidc=OIDC, identity=fewer))
    old = by_type(before, GROUP_ROLES) | by_type(before, USER_ROLES)
    new = by_type(after, GROUP_ROLES) | by_type(after, USER_ROLES)
    gone = set(old) - set(new)
    assert gone == {
        f"acme-identity-access-{principal_suffix(Principal(kind='group', name='/team a'))}"
    }
    assert {k: v for k, v in old.items() if k not in gone} == new


def test_a_principal_that_does_not_exist_fails_the_run_with_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answer = invoke_answer

    def directory(token: str, args: Any) -> Any:
        # As the provider answers for an absent group (terraform-provider-keycloak
        # keycloak/group.go, GetGroupByPath).
        if token == GET_GROUP and args.get("groupPath") == "/team a":
            raise RuntimeError(f"group not found at path: {args['groupPath']}")
        return answer(token, args)

    monkeypatch.setattr(offline, "invoke_answer", directory)
    with pytest.raises(Exception, match="group not found at path: /team a"):
        keycloak_build(replace(BASE_ARGS, oidc=OIDC, identity=IDENTITY))


def test_principals_are_looked_up_never_created() -> None:
    recording = keycloak_build(replace(BASE_ARGS, oidc=OIDC, identity=IDENTITY))
    created = {r.type for r in recording.resources.values() if r.type.startswith("keycloak:")}
    assert "keycloak:index/group:Group" not in created
    assert "keycloak:index/user:User" not in created


def test_grants_give_admins_the_user_role_too_and_sort_principals() -> None:
    assert grants(IDENTITY) == {
        Principal(kind="group", name="/platform/admins"): ("openshell-admin", "openshell-user"),
        Principal(kind="group", name="/team a"): ("openshell-user",),
        Principal(kind="user", name="alice"): ("openshell-admin", "openshell-user"),
    }


def test_principal_suffixes_differ_for_names_that_sanitise_alike() -> None:
    names = ["/a b", "/a-b", "/a_b", "/a/b", "/A b"]
    suffixes = {principal_suffix(Principal(kind="group", name=n)) for n in names}
    assert len(suffixes) == len(names)


def test_one_provider_per_server_realm_and_admin_client() -> None:
    assert server_key("https://a", "r", "c") == server_key("https://a", "r", "c")
    assert len({server_key("https://a", "r", "c"), server_key("https://b", "r", "c")}) == 2
    assert len({server_key("https://a", "r", "c"), server_key("https://a", "r", "d")}) == 2
    assert server_key("https://a", "r", "c").startswith("keycloak-r-")


# --- gateway.toml, trusted CA and the pod hash -----------------------------------------------


def test_the_oidc_table_is_written_by_the_toml_writer_with_hostile_values() -> None:
    hostile = OidcSettings(
        issuer=ISSUER, audience='aud"\n[openshell.gateway.auth]\nallow_unauthenticated_users = true'
    )
    recording, _ = build(replace(BASE_ARGS, oidc=hostile))
    toml = k8s(recording, "ConfigMap", "openshell-gateway-config", NS)["data"]["gateway.toml"]
    parsed = tomllib.loads(toml)["openshell"]["gateway"]
    assert parsed["oidc"] == {"issuer": ISSUER, "audience": hostile.audience, "jwks_ttl_secs": 3600}
    assert parsed["auth"] == {"allow_unauthenticated_users": False}


def test_the_oidc_table_has_optional_keys_only_when_set() -> None:
    assert list(oidc_table(OIDC)) == [
        "issuer",
        "audience",
        "jwks_ttl_secs",
        "roles_claim",
        "admin_role",
        "user_role",
    ]
    scoped = replace(OIDC, scopes_claim="scp", jwks_ttl_secs=600)
    assert oidc_table(scoped)["scopes_claim"] == "scp"
    assert oidc_table(scoped)["jwks_ttl_secs"] == 600


def test_no_sign_in_means_no_oidc_table() -> None:
    recording, _ = build(BASE_ARGS)
    toml = k8s(recording, "ConfigMap", "openshell-gateway-config", NS)["data"]["gateway.toml"]
    assert "oidc" not in tomllib.loads(toml)["openshell"]["gateway"]


def test_the_trusted_ca_is_a_config_map_mounted_by_sub_path_with_ssl_cert_file() -> None:
    recording, _ = build(replace(BASE_ARGS, trusted_ca_bundle=PEM))
    assert k8s(recording, "ConfigMap", "gateway-trusted-ca", NS)["data"] == {"ca-bundle.crt": PEM}
    pod = k8s(recording, "Deployment", "openshell-gateway", NS)["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert {"name": "SSL_CERT_FILE", "value": MOUNT_PATH} in container["env"]
    assert container["volumeMounts"][-1] == {
        "name": "trusted-ca",
        "mountPath": "/etc/pki/tls/certs/hypershell-ca-bundle.crt",
        "subPath": "ca-bundle.crt",
        "readOnly": True,
    }
    assert pod["volumes"][-1] == {"name": "trusted-ca", "configMap": {"name": "gateway-trusted-ca"}}


def test_without_a_bundle_there_is_no_trusted_ca() -> None:
    recording, _ = build(BASE_ARGS)
    pod = k8s(recording, "Deployment", "openshell-gateway", NS)["spec"]["template"]["spec"]
    assert all(v["name"] != "trusted-ca" for v in pod["volumes"])
    assert all(e["name"] != "SSL_CERT_FILE" for e in pod["containers"][0]["env"])


def _pod_hash(args: GatewayArgs) -> str:
    recording, _ = build(args)
    template = k8s(recording, "Deployment", "openshell-gateway", NS)["spec"]["template"]
    value: str = template["metadata"]["annotations"]["hypershell.redhat.io/config-hash"]
    return value


def test_the_pod_hash_covers_the_bundle_and_the_oidc_table() -> None:
    plain = _pod_hash(BASE_ARGS)
    bundled = _pod_hash(replace(BASE_ARGS, trusted_ca_bundle=PEM))
    other = _pod_hash(replace(BASE_ARGS, trusted_ca_bundle=PEM + PEM))
    signed = _pod_hash(replace(BASE_ARGS, oidc=OIDC))
    assert len({plain, bundled, other, signed}) == 4
    assert config_hash("t", ["a"], "u") != config_hash("t", ["a"], "u", "")


def test_gateway_outputs_carry_issuer_and_client_id() -> None:
    def program() -> Any:
        gateway = Gateway("acme", replace(BASE_ARGS, oidc=OIDC, identity=IDENTITY))
        own = Gateway(
            "own",
            replace(
                BASE_ARGS,
                namespace="openshell-own",
                exposure=BASE_ARGS.exposure,
                oidc=replace(OIDC, audience="aud-own"),
            ),
        )
        none = Gateway("none", replace(BASE_ARGS, namespace="openshell-none"))
        return pulumi.Output.all(
            gateway.issuer, gateway.client_id, own.client_id, none.issuer, none.client_id
        )

    _, outputs = run_program(program, project="p", stack="s")
    assert outputs == [ISSUER, "openshell-acme", "aud-own", None, None]


# --- resolution ------------------------------------------------------------------------------


def _stack(root: Path, **changes: Any) -> None:
    write_stack(
        root,
        clusters={"c1": cluster(identity={"keycloak": KEYCLOAK}, **changes)},
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc-secret"}},
    )


def test_a_keycloak_cluster_gives_each_gateway_a_derived_client(tmp_path: Path) -> None:
    _stack(tmp_path)
    write_gateway(tmp_path, "acme", {"access": {"admins": ["user:alice"], "users": ["group:/t"]}})
    gateway = only_gateway(tmp_path)
    assert gateway.sign_in == "keycloak"
    assert gateway.args.identity == IdentityArgs(
        realm="hypershell",
        client_id=default_client_id("acme"),
        issuer="https://sso.example.com/realms/hypershell",
        admins=(Principal(kind="user", name="alice"),),
        users=(Principal(kind="group", name="/t"),),
    )
    assert gateway.args.oidc == OidcSettings(
        issuer="https://sso.example.com/realms/hypershell",
        audience="openshell-acme",
        roles_claim="hypershell.roles",
        admin_role="openshell-admin",
        user_role="openshell-user",
    )


def test_the_issuer_override_and_an_adopted_client_id(tmp_path: Path) -> None:
    write_stack(
        tmp_path,
        clusters={
            "c1": cluster(
                identity={"keycloak": {**KEYCLOAK, "issuerUrl": "https://id.example.com/r/"}}
            )
        },
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}},
    )
    write_gateway(tmp_path, "acme", {"keycloak": {"clientId": "acme-0f3a9c"}})
    gateway = only_gateway(tmp_path)
    assert gateway.args.oidc is not None and gateway.args.identity is not None
    assert (gateway.args.oidc.issuer, gateway.args.oidc.audience) == (
        "https://id.example.com/r",
        "acme-0f3a9c",
    )
    assert gateway.args.identity.client_id == "acme-0f3a9c"


def test_own_issuer_opts_out_of_keycloak(tmp_path: Path) -> None:
    _stack(tmp_path)
    spec = {
        "oidc": {
            "issuer": "https://idp.example.com",
            "rolesClaim": "groups",
            "adminRole": "a",
            "userRole": "u",
            "scopesClaim": "scp",
            "jwksTtlSeconds": 900,
        }
    }
    write_gateway(tmp_path, "acme", spec)
    gateway = only_gateway(tmp_path)
    assert (gateway.sign_in, gateway.args.identity) == ("oidc", None)
    assert gateway.args.oidc == OidcSettings(
        issuer="https://idp.example.com",
        audience="openshell-cli",
        jwks_ttl_secs=900,
        roles_claim="groups",
        admin_role="a",
        user_role="u",
        scopes_claim="scp",
    )


def test_without_keycloak_access_and_a_client_id_are_problems(tmp_path: Path) -> None:
    write_stack(tmp_path)
    write_gateway(
        tmp_path, "acme", {"access": {"users": ["user:bob"]}, "keycloak": {"clientId": "x"}}
    )
    problems = load_problems(tmp_path)
    assert problems == [
        (
            f"{DECLARATIONS}/acme.yaml",
            "spec.access",
            "cluster 'c1' has no identity.keycloak; declare spec.oidc and grant the roles in"
            " your issuer",
        ),
        (
            f"{DECLARATIONS}/acme.yaml",
            "spec.keycloak",
            "cluster 'c1' has no identity.keycloak; there is no Keycloak client to keep",
        ),
    ]


def test_two_gateways_may_not_share_a_client(tmp_path: Path) -> None:
    _stack(tmp_path)
    write_gateway(tmp_path, "acme")
    write_gateway(tmp_path, "other", {"keycloak": {"clientId": "openshell-acme"}})
    assert load_problems(tmp_path) == [
        (
            f"{DECLARATIONS}/other.yaml",
            "spec.keycloak.clientId",
            "client 'openshell-acme' of realm 'hypershell' is already used by"
            f" {DECLARATIONS}/acme.yaml",
        ),
    ]


BUILTIN = (
    "is one of the clients Keycloak creates in every realm; a gateway needs a client of its own"
)


@pytest.mark.parametrize(
    "client_id",
    [
        "account",
        "account-console",
        "admin-cli",
        "broker",
        "realm-management",
        "security-admin-console",
    ],
)
def test_a_keycloak_built_in_client_is_no_gateways(tmp_path: Path, client_id: str) -> None:
    _stack(tmp_path)
    source = write_gateway(tmp_path, "acme", {"keycloak": {"clientId": client_id}})
    assert load_problems(tmp_path) == [
        (source, "spec.keycloak.clientId", f"client {client_id!r} {BUILTIN}")
    ]


def test_a_console_client_may_not_be_a_built_in_one(tmp_path: Path) -> None:
    # security-admin is no built-in, but its console's client security-admin-console is.
    _stack(tmp_path)
    spec = {"keycloak": {"clientId": "security-admin"}, "console": {"enabled": True}}
    source = write_gateway(tmp_path, "acme", spec)
    assert load_problems(tmp_path) == [
        (source, "spec.console.enabled", f"client 'security-admin-console' {BUILTIN}")
    ]


def test_the_admin_client_is_no_gateways(tmp_path: Path) -> None:
    _stack(tmp_path)
    source = write_gateway(tmp_path, "acme", {"keycloak": {"clientId": "provisioner"}})
    assert load_problems(tmp_path) == [
        (
            source,
            "spec.keycloak.clientId",
            "client 'provisioner' of realm 'hypershell' is the admin client Pulumi signs in"
            " with (identity.keycloak.adminClientId of cluster 'c1'); the gateway would take it"
            " over, and deleting the gateway would delete it",
        )
    ]


def test_a_client_may_not_be_another_gateways_console_client(tmp_path: Path) -> None:
    _stack(tmp_path)
    write_gateway(tmp_path, "acme", {"console": {"enabled": True}})
    source = write_gateway(tmp_path, "zeta", {"keycloak": {"clientId": "openshell-acme-console"}})
    assert load_problems(tmp_path) == [
        (
            source,
            "spec.keycloak.clientId",
            "client 'openshell-acme-console' of realm 'hypershell' is already used by"
            f" {DECLARATIONS}/acme.yaml (the client of its web console)",
        )
    ]


def test_a_realm_is_one_whatever_the_case_of_its_host(tmp_path: Path) -> None:
    upper = {**KEYCLOAK, "url": "https://SSO.example.com"}
    write_stack(
        tmp_path,
        clusters={
            "c1": cluster(identity={"keycloak": KEYCLOAK}),
            "c2": cluster(identity={"keycloak": upper}, baseDomain="two.example.com"),
        },
        secrets={
            name: {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}
            for name in ("c1", "c2")
        },
    )
    write_gateway(tmp_path, "acme", {"cluster": "c1"})
    source = write_gateway(
        tmp_path, "other", {"cluster": "c2", "keycloak": {"clientId": "openshell-acme"}}
    )
    assert load_problems(tmp_path) == [
        (
            source,
            "spec.keycloak.clientId",
            "client 'openshell-acme' of realm 'hypershell' is already used by"
            f" {DECLARATIONS}/acme.yaml",
        )
    ]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            "https://sso.example.com:0",
            "'https://sso.example.com:0': port 0 is out of range (1-65535)",
        ),
        (
            "https://sso.example.com:99999",
            "'https://sso.example.com:99999': port 99999 is out of range (1-65535)",
        ),
        (
            "https://sso",
            "URL host 'sso' is a single label; it must be a fully qualified DNS name such as"
            " sso.example.com",
        ),
        ("https://10.0.0.1", "URL host '10.0.0.1' is an IP address; it must be a DNS name"),
        (
            "https://sso.example.com/realms/../admin",
            "'https://sso.example.com/realms/../admin': the path has an empty, '.' or '..' segment",
        ),
        (
            "https://sso.example.com//r",
            "'https://sso.example.com//r': the path has an empty, '.' or '..' segment",
        ),
        (
            "https://sso.example.com/r%zz",
            "'https://sso.example.com/r%zz': the path has a '%' that is no escape (%XX, two hex"
            " digits)",
        ),
    ],
)
@pytest.mark.parametrize("field", ["url", "issuerUrl", "spec.oidc.issuer"])
def test_garbage_keycloak_and_oidc_urls_are_refused(
    tmp_path: Path, url: str, message: str, field: str
) -> None:
    server = {**KEYCLOAK, field: url} if field != "spec.oidc.issuer" else KEYCLOAK
    write_stack(
        tmp_path,
        clusters={"c1": cluster(identity={"keycloak": server})},
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}},
    )
    spec = {"oidc": {"issuer": url}} if field == "spec.oidc.issuer" else {}
    source = write_gateway(tmp_path, "acme", spec)
    where = (
        (source, field)
        if field == "spec.oidc.issuer"
        else (CONFIG_FILE, f"{PREFIX}clusters.c1.identity.keycloak.{field}")
    )
    assert load_problems(tmp_path) == [(*where, message)]


def test_ca_bundles_are_read_from_the_project(tmp_path: Path) -> None:
    write_text(tmp_path, "certs/ca.pem", PEM)
    _stack(tmp_path, trustedCaBundleFile="certs/ca.pem")
    write_gateway(tmp_path, "acme")
    loaded = load(tmp_path)
    assert loaded.gateways[0].args.trusted_ca_bundle == PEM
    assert loaded.bundles["c1"].trusted == PEM and loaded.bundles["c1"].keycloak is None


KEY_BLOCK = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgE=\n-----END PRIVATE KEY-----\n"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (
            PEM + KEY_BLOCK,
            "holds a 'PRIVATE KEY' block at line 4; a CA bundle holds certificates only (its"
            " whole text is published): remove that block",
        ),
        (
            KEY_BLOCK.replace("PRIVATE KEY", "EC PRIVATE KEY") + PEM,
            "holds a 'EC PRIVATE KEY' block at line 1; a CA bundle holds certificates only (its"
            " whole text is published): remove that block",
        ),
        (
            PEM + "-----BEGIN TRUSTED CERTIFICATE-----\nMIIB\n-----END TRUSTED CERTIFICATE-----\n",
            "holds a 'TRUSTED CERTIFICATE' block at line 4; a CA bundle holds certificates only"
            " (its whole text is published): remove that block",
        ),
        (PEM + "junk -----BEGIN PRIVATE KEY-----\n", "has a broken PEM boundary at line 4"),
        (
            PEM.replace("-----END CERTIFICATE-----\n", ""),
            "has a BEGIN CERTIFICATE at line 1 that no END closes",
        ),
        (
            PEM + "-----END CERTIFICATE-----\n",
            "has an END CERTIFICATE at line 4 that closes no BEGIN CERTIFICATE",
        ),
        (
            "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
            "has a certificate at line 1 that is not base64",
        ),
    ],
)
@pytest.mark.parametrize("field", ["trustedCaBundleFile", "identity.keycloak.caBundleFile"])
def test_a_bundle_holds_certificates_only(
    tmp_path: Path, content: str, problem: str, field: str
) -> None:
    # Its text goes whole into ConfigMap gateway-trusted-ca of every tenant namespace (or to
    # the Keycloak provider): a key beside the certificates would be published with them.
    write_text(tmp_path, "certs/ca.pem", content)
    keycloak = {**KEYCLOAK, "caBundleFile": "certs/ca.pem"} if "keycloak" in field else KEYCLOAK
    trusted = {"trustedCaBundleFile": "certs/ca.pem"} if "keycloak" not in field else {}
    write_stack(
        tmp_path,
        clusters={"c1": cluster(identity={"keycloak": keycloak}, **trusted)},
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}},
    )
    write_gateway(tmp_path, "acme")
    assert load_problems(tmp_path) == [
        (CONFIG_FILE, f"{PREFIX}clusters.c1.{field}", f"'certs/ca.pem' {problem}")
    ]


def test_explanatory_text_between_certificates_is_kept(tmp_path: Path) -> None:
    bundle = "# Development CA\n" + PEM + "\nSubject: CN=other\n" + PEM
    write_text(tmp_path, "certs/ca.pem", bundle)
    _stack(tmp_path, trustedCaBundleFile="certs/ca.pem")
    write_gateway(tmp_path, "acme")
    assert only_gateway(tmp_path).args.trusted_ca_bundle == bundle


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "'certs/ca.pem' is not a file of the project"),
        (
            "not a certificate\n",
            "'certs/ca.pem' holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
        ),
        ("caf\u00e9\n", "'certs/ca.pem' is not PEM text (ASCII)"),
    ],
)
def test_a_bundle_that_is_no_bundle_is_a_problem(
    tmp_path: Path, content: str | None, message: str
) -> None:
    if content is not None:
        write_text(tmp_path, "certs/ca.pem", content)
    write_stack(
        tmp_path,
        clusters={
            "c1": cluster(identity={"keycloak": {**KEYCLOAK, "caBundleFile": "certs/ca.pem"}})
        },
        secrets={"c1": {"dbAdminPassword": "pw", "keycloakAdminClientSecret": "kc"}},
    )
    assert load_problems(tmp_path) == [
        (CONFIG_FILE, f"{PREFIX}clusters.c1.identity.keycloak.caBundleFile", message)
    ]


def test_a_bundle_linked_outside_the_project_is_a_problem(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_text(tmp_path, "outside.pem", PEM)
    (root / "certs").mkdir(parents=True)
    (root / "certs" / "ca.pem").symlink_to(tmp_path / "outside.pem")
    _stack(root, trustedCaBundleFile="certs/ca.pem")
    assert load_problems(root) == [
        (
            CONFIG_FILE,
            f"{PREFIX}clusters.c1.trustedCaBundleFile",
            "'certs/ca.pem' leads outside the project through a symbolic link",
        ),
    ]


def test_the_program_shares_one_provider_per_server_and_keeps_its_secret_secret(
    tmp_path: Path,
) -> None:
    from gatewayctl.engine import render
    from gatewayctl.resolve import preparation

    two = {
        "east": cluster(baseDomain="east.example.com", identity={"keycloak": KEYCLOAK}),
        "west": cluster(baseDomain="west.example.com", identity={"keycloak": KEYCLOAK}),
    }
    write_stack(
        tmp_path,
        clusters=two,
        secrets={c: {"dbAdminPassword": "pw", "keycloakAdminClientSecret": f"kc-{c}"} for c in two},
    )
    write_gateway(tmp_path, "a", {"cluster": "east"})
    write_gateway(tmp_path, "b", {"cluster": "west"})
    recording = render.execute(preparation.prepare(tmp_path, "test")).recording
    (provider,) = recording.of_type("pulumi:providers:keycloak")
    assert provider.inputs["url"] == "https://sso.example.com"
    assert provider.inputs["realm"] == "hypershell"
    assert provider.inputs["clientId"] == "provisioner"
    assert is_secret(provider.inputs["clientSecret"])
    clients = recording.of_type(CLIENT)
    assert sorted(c.provider or "" for c in clients) == [provider.urn, provider.urn]


def test_the_stack_outputs_gain_issuer_client_id_and_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    from gatewayctl.engine import program
    from gatewayctl.inputs.stackfile import PROJECT
    from gatewayctl.inputs.yamlfile import SECRETS_KEY
    from gatewayctl.resolve import preparation
    from tests.support import ROOT

    exported: dict[str, Any] = {}
    monkeypatch.setattr(pulumi, "export", lambda name, value: exported.setdefault(name, value))
    prepared = preparation.prepare(ROOT, "local")

    def main() -> Any:
        program.main(ROOT)
        return exported["gateways"]

    _, outputs = run_program(
        main,
        project=PROJECT,
        stack="local",
        config=prepared.config,
        secret_keys=[f"{PROJECT}:{SECRETS_KEY}"],
    )
    facts = {name: (o["issuer"], o["clientId"], o["roles"]) for name, o in sorted(outputs.items())}
    issuer = "https://keycloak.hypershell.localhost/realms/hypershell"
    roles = ["openshell-admin", "openshell-user"]
    assert facts == {
        "dev": (issuer, "openshell-dev", roles),
        "dev-build": (issuer, "openshell-dev-build", roles),
        "offline": (None, None, []),
    }

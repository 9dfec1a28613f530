"""Adoption, for real (issue 24 item 3; docs/adoption.md, "Adopting gateways made by the upstream
controller"): the set-up both adoption test files share, run once for the session
(conftest's ``adoption`` fixture), and what they check it against.

A tenant is made the way upstream's controller makes it: its namespace, then its templates
(``reference/upstream-manifests``, upstream's deploy order and placeholder order,
created with plain creates under the controller's field manager, not server-side apply), its
Secrets as cert-manager, the certgen Job and the controller write them (none of those can run
here: the Secrets are written with the keys, types and labels they write, from keys minted
here), its PostgreSQL role and database with the SQL CNPG runs, and its Keycloak client,
roles, mappers and default scopes through Keycloak's admin API as upstream's
``internal/keycloak/client.go`` makes them. The gateway is then declared with
``spec.namespace``, ``spec.databaseName`` and ``spec.keycloak``, and the README's steps run
with the real CLI: ``gatewayctl import-file``, ``pulumi up --target`` of what it prints,
``pulumi import --file``, ``pulumi preview``, the forced first ``up``, and a preview that
must find nothing to do.

Every row of the import file is one the engine imports for real: the Kubernetes objects with
pulumi-kubernetes, the PostgreSQL role and database through the postgresql stand-in plugin,
which reads them from the project's real PostgreSQL by name (tests/e2e/databases.py), and the
Keycloak client and roles through the keycloak stand-in plugin (e2e/providers/keycloak.py),
which reads them through the admin API from their ``<realm>/<uuid>`` ids, as the providers'
importers do, logged in as the stack's provisioning client (made here with upstream's client,
in realm ``adopt``). The README's step 3 (``up --target`` of what ``import-file`` prints)
creates, besides the clusters, the adopted gateway's Gateway and Database components and the
password its database owner's provider logs in with: the engine creates every provider of a
targeted ``up`` (pulumi/pulumi pkg/resource/deploy/step_generator.go,
isImplicitlyTargetedResource), and refused the step while that provider was made from the
Role and Database the import adopts (found here on 2026-12-06).

Upstream's role and database are made by the server's superuser, as CNPG makes them; the
stack's admin (``postgres``, the ``local`` stack's ``adminUser``) is the superuser too, as it is
on a CNPG cluster: on PostgreSQL 16+ a ``CREATEROLE`` admin that is not superuser may change
only roles it holds ``ADMIN OPTION`` on, so the first ``up``'s new password for the adopted role
(``ALTER ROLE ... PASSWORD``) needs one or the other.

What the import file names is checked in ``test_e2e_f_adoption_import.py``, what the previews
and the forced ``up`` after the import do in ``test_e2e_f_adoption_up.py``.
"""

from __future__ import annotations

import base64
import datetime
import json
import secrets
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from e2e.cluster import Cluster
from e2e.engine import Engine, Result, client_runtime
from e2e.keycloak import Keycloak
from e2e.project import CLUSTERS, ROOT, E2EProject, make_project
from tests import pg_server
from tests.e2e import realms
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import UPSTREAM, rendered, stack_args
from tests.e2e.realms import ok

STACK = "e2e-adopt"
REALM = "adopt"
GATEWAY = "legacy"
KSUID = "0ujtsYcgvSTl8PAuAdqWYSMnLOv"  # upstream-gateway-anatomy.md §2.1's example
DATABASE = f"gw_{KSUID.lower()}"  # §2.2: role and database gw_<id lowercased>
UPSTREAM_CLIENT = f"{GATEWAY}-{KSUID}"  # §7.5: <gateway name>-<gateway id>, case preserved
CONTROLLER = "hypershell-control-plane"
"""The field manager of upstream's plain creates and updates (its managedFields entries)."""
DEPLOY_ORDER = [
    "rbac",
    "serviceaccount",
    "configmap",
    "certgen-job",
    "service",
    "deployment",
    "networkpolicy",
]
"""§1.1, "Deploy order of the manifest files"; ``route.yaml`` is never applied."""
MANAGED = {
    "app.kubernetes.io/managed-by": CONTROLLER,
    "hypershell.redhat.io/managed": "true",
}


def ksuid_namespace(ksuid: str) -> str:
    """§2.1: ``openshell-`` and the hex of the first 8 bytes of the KSUID's 16-byte payload
    (a KSUID is 20 bytes in base62: a 4-byte timestamp, then the payload)."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    number = 0
    for char in ksuid:
        number = number * 62 + alphabet.index(char)
    return "openshell-" + number.to_bytes(20, "big")[4:12].hex()


NAMESPACE = ksuid_namespace(KSUID)


def _pem_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def _certificate(
    subject: str | None,
    key: Any,
    issuer: tuple[x509.Name, Any] | None,
    *,
    ca: bool = False,
    dns: list[str] | None = None,
) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)] if subject else [])
    issuer_name, issuer_key = issuer or (name, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=90))  # cert-manager's default duration
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _tls_secret(name: str, certificate: str, key: str, ca: str, cert_name: str) -> dict[str, Any]:
    """A Secret as cert-manager writes it for a Certificate (type kubernetes.io/tls,
    ``tls.crt``/``tls.key``/``ca.crt``, its annotations naming the Certificate and Issuer)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {"controller.cert-manager.io/fao": "true"},
            "annotations": {
                "cert-manager.io/certificate-name": cert_name,
                "cert-manager.io/issuer-name": "openshell-ca-issuer",
                "cert-manager.io/issuer-kind": "Issuer",
                "cert-manager.io/issuer-group": "cert-manager.io",
            },
        },
        "stringData": {"tls.crt": certificate, "tls.key": key, "ca.crt": ca},
    }


def _secrets(password: str) -> list[dict[str, Any]]:
    """The tenant's Secrets (§1.2, §2.3, §3): cert-manager's CA, server and client Secrets,
    the certgen Job's JWT keys, the controller's database credentials and KEK."""
    ca_key = ec.generate_private_key(ec.SECP256R1())  # §3: the CA's key is ECDSA 256
    ca = _certificate("openshell-ca", ca_key, None, ca=True)
    ca_pem = ca.public_bytes(serialization.Encoding.PEM).decode()
    issued = []
    for name, subject, dns in (
        ("server", None, [f"openshell-gateway.{NAMESPACE}.svc.cluster.local"]),
        ("client", "openshell-client", None),
    ):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # RSA 2048
        cert = _certificate(subject, key, (ca.subject, ca_key), dns=dns)
        issued.append(
            _tls_secret(
                f"openshell-{name}-tls",
                cert.public_bytes(serialization.Encoding.PEM).decode() + ca_pem,
                _pem_key(key),
                ca_pem,
                f"openshell-{name}",
            )
        )
    jwt_key = ec.generate_private_key(ec.SECP256R1())
    public = jwt_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    # Upstream's host is openshell-db-rw.<database namespace>.svc.cluster.local; the stack's
    # database.host names the same server (Pulumi.local.yaml: the local stack's).
    host, port = "postgres.hypershell-system.svc.cluster.local", "5432"
    opaque = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque"}
    return [
        _tls_secret("openshell-ca-tls", ca_pem, _pem_key(ca_key), ca_pem, "openshell-ca"),
        *issued,
        {
            **opaque,
            "metadata": {"name": "openshell-gateway-jwt-keys", "namespace": NAMESPACE},
            "stringData": {
                "signing.pem": _pem_key(jwt_key),
                "public.pem": public.decode(),
                "kid": secrets.token_hex(8),
            },
        },
        {
            **opaque,
            "metadata": {
                "name": "openshell-gateway-db-credentials",
                "namespace": NAMESPACE,
                "labels": {
                    "app.kubernetes.io/name": "openshell",
                    "app.kubernetes.io/component": "database",
                    **MANAGED,
                },
            },
            "stringData": {
                "host": host,
                "port": port,
                "dbname": DATABASE,
                "user": DATABASE,
                "password": password,
                "uri": f"postgresql://{DATABASE}:{password}@{host}:{port}/{DATABASE}?sslmode=require",
            },
        },
        {
            **opaque,
            "metadata": {
                "name": "openshell-gateway-credential-kek",
                "namespace": NAMESPACE,
                "labels": {
                    "app.kubernetes.io/name": "openshell",
                    "app.kubernetes.io/component": "gateway",
                    **MANAGED,
                },
            },
            "stringData": {
                "key-encryption-key": base64.b64encode(secrets.token_bytes(32)).decode()
            },
        },
    ]


def _templates(images: dict[str, str]) -> list[dict[str, Any]]:
    """Upstream's templates in deploy order, its placeholders replaced in its fixed order
    over the JSON text (§1.1); the node-reader ClusterRole is left as the cluster fixture
    applied it from the same template."""
    documents = []
    for name in DEPLOY_ORDER:
        text = json.dumps(list(yaml.safe_load_all((UPSTREAM / f"{name}.yaml").read_text())))
        for placeholder, value in (
            ("NAMESPACE_PLACEHOLDER", NAMESPACE),
            ("SUPERVISOR_IMAGE_PLACEHOLDER", images["supervisor"]),
            ("SANDBOX_IMAGE_PLACEHOLDER", images["sandbox"]),
            ("IMAGE_PLACEHOLDER", images["gateway"]),
        ):
            text = text.replace(placeholder, value)
        documents += [d for d in json.loads(text) if d and d["kind"] != "ClusterRole"]
    return documents


def make_upstream_tenant(cluster: Cluster, images: dict[str, str], password: str) -> None:
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": MANAGED},
    }
    trusted = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "gateway-trusted-ca", "namespace": NAMESPACE},
        # §1.2: copied from the control plane's own ConfigMap; the local stack's private CA.
        "data": {"ca-bundle.crt": (ROOT / "certs" / "hypershell-local-ca.pem").read_text()},
    }
    for document in [namespace, *_templates(images), *_secrets(password), trusted]:
        cluster.kubectl(
            "create", f"--field-manager={CONTROLLER}", "-f", "-", input=json.dumps(document)
        )


def make_upstream_database(server: pg_server.Server, password: str) -> None:
    """What CNPG runs for upstream's DatabaseRole and Database (§2.2): a login role with the
    Secret's password, a database it owns."""
    with server.superuser() as connection:
        connection.execute(
            f"CREATE ROLE {DATABASE} LOGIN PASSWORD '{password}'"  # a hex password, no quote
        )
        connection.execute(f"CREATE DATABASE {DATABASE} OWNER {DATABASE}")


def make_upstream_client(keycloak: Keycloak, front: str, provisioner: str) -> dict[str, str]:
    """The realm (its ``frontendUrl`` the stack's Keycloak URL) with the stack's provisioning
    client ``provisioner`` (docs/sign-in.md's prerequisites, tests/e2e/realms.py), then §7.5:
    the public client ``<name>-<id>``, its two roles, three mappers and five default scopes,
    through the admin API; Keycloak's ids of the client and roles."""
    admin = keycloak.admin_token()
    realms.make_realm(keycloak, admin, REALM, front)
    realms.make_provisioner(keycloak, admin, REALM, provisioner)
    body = {
        "clientId": UPSTREAM_CLIENT,
        "publicClient": True,
        "standardFlowEnabled": True,
        "directAccessGrantsEnabled": True,
        "fullScopeAllowed": False,
        "redirectUris": ["http://127.0.0.1:*", "http://localhost:*"],
        "attributes": {
            "pkce.code.challenge.method": "S256",
            "oauth2.device.authorization.grant.enabled": "true",
        },
    }
    created = ok(keycloak.admin("POST", f"/{REALM}/clients", admin, json=body), 201)
    uuid = created.headers["Location"].rsplit("/", 1)[-1]
    ids = {"client": uuid}
    for key, role in (("adminRole", "openshell-admin"), ("userRole", "openshell-user")):
        ok(
            keycloak.admin("POST", f"/{REALM}/clients/{uuid}/roles", admin, json={"name": role}),
            201,
        )
        ids[key] = ok(
            keycloak.admin("GET", f"/{REALM}/clients/{uuid}/roles/{role}", admin), 200
        ).json()["id"]
    for name, kind, config in (
        (
            "audience",
            "oidc-audience-mapper",
            {"included.client.audience": UPSTREAM_CLIENT, "access.token.claim": "true"},
        ),
        ("sub", "oidc-sub-mapper", {"access.token.claim": "true"}),
        (
            "client roles",
            "oidc-usermodel-client-role-mapper",
            {
                "claim.name": "hypershell.roles",
                "multivalued": "true",
                "usermodel.clientRoleMapping.clientId": UPSTREAM_CLIENT,
                "access.token.claim": "true",
                "id.token.claim": "true",
            },
        ),
    ):
        mapper = {"name": name, "protocol": "openid-connect", "protocolMapper": kind}
        ok(
            keycloak.admin(
                "POST",
                f"/{REALM}/clients/{uuid}/protocol-mappers/models",
                admin,
                json={**mapper, "config": config},
            ),
            201,
        )
    scopes = {
        s["name"]: s["id"]
        for s in ok(keycloak.admin("GET", f"/{REALM}/client-scopes", admin), 200).json()
    }
    for scope in ("profile", "email", "roles", "web-origins", "acr"):
        ok(
            keycloak.admin(
                "PUT", f"/{REALM}/clients/{uuid}/default-client-scopes/{scopes[scope]}", admin
            ),
            204,
        )
    return ids


# --- the README's steps -------------------------------------------------------------------


@dataclass
class Adoption:
    project: E2EProject
    document: dict[str, Any]
    printed: str
    keycloak_ids: dict[str, str]
    mapper_refused: tuple[int, str]
    """Keycloak's answer to a second ``audience`` mapper on upstream's client (status, body)."""
    imported: Result
    unforced: Result
    preview: Result
    up: Result
    after: Result
    live_before: dict[str, Any]
    live_after: dict[str, Any]
    seconds: dict[str, float]


def _declare(project: E2EProject, keycloak_ids: dict[str, str]) -> None:
    project.write_declaration(
        GATEWAY,
        {
            "apiVersion": "hypershell.redhat.io/v1alpha1",
            "kind": "Gateway",
            "metadata": {"name": GATEWAY},
            "spec": {
                "namespace": NAMESPACE,
                "databaseName": DATABASE,
                "keycloak": {"clientId": UPSTREAM_CLIENT, "importIds": keycloak_ids},
            },
        },
    )


def _release_images(project: E2EProject) -> dict[str, str]:
    """The images the stack's release names (the adopted gateway runs the same version)."""
    files = rendered(project).files
    deployment = yaml.safe_load(
        files[f"manifests/kind/{NAMESPACE}/deployment-openshell-gateway.yaml"]
    )
    config = yaml.safe_load(
        files[f"manifests/kind/{NAMESPACE}/configmap-openshell-gateway-config.yaml"]
    )
    gateway = tomllib.loads(config["data"]["gateway.toml"])["openshell"]["gateway"]
    return {
        "gateway": deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "supervisor": gateway["supervisor_image"],
        "sandbox": gateway["default_image"],
    }


def _cli(engine: Engine, project: E2EProject, env: dict[str, str], *args: str, **kw: Any) -> Result:
    return engine.run([*args, *stack_args(project)], cwd=project.root, env=env, **kw)


def adopt(
    engine: Engine,
    cluster: Cluster,
    keycloak: Keycloak,
    databases: LaneDatabases,
    workdir: Path,
    kube_env: dict[str, str],
) -> Adoption:
    """README steps 3 and 4 against a tenant made as upstream's controller makes it; every
    result kept for the tests."""
    seconds: dict[str, float] = {}
    project = make_project(
        workdir / "projects", stack=STACK, source="local", context=cluster.context(), gateways=[]
    )
    config = yaml.safe_load(project.config_file.read_text())
    for cluster_config in config["config"][CLUSTERS].values():
        server = cluster_config["identity"]["keycloak"]
        server["realm"] = REALM
    project.config_file.write_text(yaml.safe_dump(config, sort_keys=False))
    postgres = databases.by_stack[STACK].server
    with postgres.superuser() as connection:  # CNPG's postgres (module docstring)
        connection.execute("ALTER ROLE postgres SUPERUSER")
    # Rendered once before the Keycloak client exists, for the release's images: the ids are
    # not used by the render (the upstream tenant runs the stack's own release, so the
    # preview's changes are the adoption's alone, not a version bump's).
    placeholder = "00000000-0000-4000-8000-000000000000"
    _declare(project, {"client": placeholder, "adminRole": placeholder, "userRole": placeholder})
    images = _release_images(project)

    started = time.monotonic()
    password = secrets.token_hex(32)  # §2.2: 64 hex characters
    make_upstream_tenant(cluster, images, password)
    make_upstream_database(postgres, password)
    keycloak_ids = make_upstream_client(keycloak, server["url"], server["adminClientId"])
    seconds["upstream"] = time.monotonic() - started
    _declare(project, keycloak_ids)

    # README step 3: the import file, and the commands it prints.
    done = subprocess.run(
        [sys.executable, "-m", "gatewayctl", "--root", str(project.root), "import-file", STACK],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    path = project.root / "build" / "import" / f"{STACK}.json"
    document = json.loads(path.read_text())
    engine.run(["stack", "init", STACK, "--cwd", str(project.root)], cwd=project.root, env=kube_env)
    program = project.program()
    targets = list(document["nameTable"])
    started = time.monotonic()
    targeted = _cli(
        engine,
        project,
        kube_env,
        "up",
        "--yes",
        "--skip-preview",
        *[f"--target={t}" for t in targets],
        program=program,
        check=False,
    )
    seconds["targets"] = time.monotonic() - started
    assert targeted.returncode == 0, targeted.stdout[-3000:]
    started = time.monotonic()
    with client_runtime(project.root, program):
        imported = _cli(
            engine,
            project,
            kube_env,
            "import",
            "--yes",
            "--file",
            str(path),
            "--protect=false",
            "--generate-code=false",
            "--json",
            check=False,
        )
    seconds["import"] = time.monotonic() - started
    started = time.monotonic()
    unforced = _cli(engine, project, kube_env, "preview", "--json", program=program, check=False)
    seconds["preview"] = time.monotonic() - started
    # README step 4: the first apply takes the fields upstream's controller owns.
    force = {**kube_env, "PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}
    preview = _cli(engine, project, force, "preview", "--json", "--diff", program=program)
    # docs/adoption.md step 5: the `up` creates the program's mappers, and Keycloak refuses a
    # second mapper of the same name on a client (as it refused the stand-in's POST of ours
    # before this step existed), so upstream's three are deleted first.
    mapper_refused = delete_upstream_mappers(keycloak, keycloak_ids["client"])
    live_before = _live(cluster)
    started = time.monotonic()
    up = _cli(
        engine,
        project,
        force,
        "up",
        "--yes",
        "--skip-preview",
        "--json",
        program=program,
        check=False,
    )
    seconds["up"] = time.monotonic() - started
    after = _cli(engine, project, kube_env, "preview", "--json", program=program)
    return Adoption(
        project=project,
        document=document,
        printed=done.stdout,
        keycloak_ids=keycloak_ids,
        mapper_refused=mapper_refused,
        imported=imported,
        unforced=unforced,
        preview=preview,
        up=up,
        after=after,
        live_before=live_before,
        live_after=_live(cluster),
        seconds=seconds,
    )


def delete_upstream_mappers(keycloak: Keycloak, client: str) -> tuple[int, str]:
    """Keycloak's answer to one more ``audience`` mapper on upstream's client (what the
    provider's POST of the program's gets), then upstream's mappers deleted by the bootstrap
    administrator (docs/adoption.md, step 5)."""
    admin = keycloak.admin_token()
    models = f"/{REALM}/clients/{client}/protocol-mappers/models"
    again = keycloak.admin(
        "POST",
        models,
        admin,
        json={
            "name": "audience",
            "protocol": "openid-connect",
            "protocolMapper": "oidc-audience-mapper",
            "config": {"included.client.audience": UPSTREAM_CLIENT},
        },
    )
    for mapper in ok(keycloak.admin("GET", models, admin), 200).json():
        ok(keycloak.admin("DELETE", f"{models}/{mapper['id']}", admin), 204)
    return again.status_code, again.text


def _live(cluster: Cluster) -> dict[str, Any]:
    """What the adoption must keep or change: the KEK, the Service's cluster IP and uid, the
    Deployment's pod template, the database credentials."""

    def get(kind: str, name: str) -> Any:
        return cluster.get(kind, name, namespace=NAMESPACE)

    service = get("service", "openshell-gateway")
    deployment = get("deployment", "openshell-gateway")
    return {
        "kek": get("secret", "openshell-gateway-credential-kek")["data"],
        "service": (service["metadata"]["uid"], service["spec"]["clusterIP"]),
        "template": deployment["spec"]["template"]["metadata"].get("annotations", {}),
        "db-password": get("secret", "openshell-gateway-db-credentials")["data"]["password"],
    }


def _type(urn: str) -> str:
    """The resource type of a URN (its last ``$``-separated qualified type)."""
    return urn.split("::")[2].split("$")[-1]

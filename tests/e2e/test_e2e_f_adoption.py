"""Adoption, for real: issue 24 item 3 (README, "Adopting gateways made by the upstream
controller").

A tenant is made the way upstream's controller makes it: its namespace, then its templates
(``shared/reference/upstream-manifests``, upstream's deploy order and placeholder order,
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

What the engine cannot do here: the PostgreSQL role and database and the Keycloak client and
roles are rows of the import file for the postgresql and keycloak providers, which cannot be
built (e2e/engine.py; README, "The real-engine lane"). ``pulumi import`` of those rows fails
(the test runs it and keeps the error), so the engine imports the Kubernetes rows, and the
other rows' ids are checked against the real servers: the names exist in the real
PostgreSQL, the ``<realm>/<uuid>`` are the ids Keycloak's admin API returns for upstream's
client and roles.
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
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from e2e.cluster import Cluster
from e2e.engine import MOCKED_PACKAGES, Engine, Result, client_runtime, package_of
from e2e.keycloak import Keycloak
from e2e.project import CLUSTERS, ROOT, E2EProject, make_project
from tests import pg_server
from tests.e2e.conftest import UPSTREAM
from tests.e2e.lane import figure, rendered, stack_args

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


def _ok(response: requests.Response, *codes: int) -> requests.Response:
    assert response.status_code in codes, (
        response.request.method,
        response.url,
        response.status_code,
        response.text[:500],
    )
    return response


# --- the tenant as upstream makes it ----------------------------------------------------------


def _pem_key(key: Any) -> str:
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


def make_upstream_client(keycloak: Keycloak) -> dict[str, str]:
    """§7.5: the public client ``<name>-<id>``, its two roles, three mappers and five default
    scopes, through the admin API; Keycloak's ids of the client and roles."""
    admin = keycloak.admin_token()
    _ok(keycloak.admin("POST", "", admin, json={"realm": REALM, "enabled": True}), 201)
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
    created = _ok(keycloak.admin("POST", f"/{REALM}/clients", admin, json=body), 201)
    uuid = created.headers["Location"].rsplit("/", 1)[-1]
    ids = {"client": uuid}
    for key, role in (("adminRole", "openshell-admin"), ("userRole", "openshell-user")):
        _ok(
            keycloak.admin("POST", f"/{REALM}/clients/{uuid}/roles", admin, json={"name": role}),
            201,
        )
        ids[key] = _ok(
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
        _ok(
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
        for s in _ok(keycloak.admin("GET", f"/{REALM}/client-scopes", admin), 200).json()
    }
    for scope in ("profile", "email", "roles", "web-origins", "acr"):
        _ok(
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
    refused: Result
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


@pytest.fixture(scope="module")
def adoption(
    engine: Engine,
    cluster: Cluster,
    keycloak: Keycloak,
    postgres: pg_server.Server,
    workdir: Path,
    kube_env: dict[str, str],
) -> Iterator[Adoption]:
    seconds: dict[str, float] = {}
    project = make_project(
        workdir / "projects", stack=STACK, source="local", context=cluster.context(), gateways=[]
    )
    config = yaml.safe_load(project.config_file.read_text())
    for cluster_config in config["config"][CLUSTERS].values():
        cluster_config["identity"]["keycloak"]["realm"] = REALM
    project.config_file.write_text(yaml.safe_dump(config, sort_keys=False))
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
    keycloak_ids = make_upstream_client(keycloak)
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
    targets = [t for t in document["nameTable"] if package_of(_type(t)) not in MOCKED_PACKAGES]
    started = time.monotonic()
    _cli(
        engine,
        project,
        kube_env,
        "up",
        "--yes",
        "--skip-preview",
        *[f"--target={t}" for t in targets],
        program=program,
    )
    seconds["targets"] = time.monotonic() - started
    # The whole file: the rows of the providers that cannot be built fail (kept for the report).
    with client_runtime(project.root, program):
        refused = _cli(
            engine,
            project,
            kube_env,
            "import",
            "--yes",
            "--file",
            str(path),
            "--protect=false",
            "--generate-code=false",
            check=False,
        )
    kubernetes_only = {
        "nameTable": {
            k: v
            for k, v in document["nameTable"].items()
            if package_of(_type(k)) not in MOCKED_PACKAGES
        },
        "resources": [
            r for r in document["resources"] if package_of(r["type"]) not in MOCKED_PACKAGES
        ],
    }
    engine_file = path.with_name(f"{STACK}.kubernetes.json")
    engine_file.write_text(json.dumps(kubernetes_only, indent=2))
    started = time.monotonic()
    with client_runtime(project.root, program):
        imported = _cli(
            engine,
            project,
            kube_env,
            "import",
            "--yes",
            "--file",
            str(engine_file),
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
    live_before = _live(cluster)
    started = time.monotonic()
    up = _cli(engine, project, force, "up", "--yes", "--skip-preview", "--json", program=program)
    seconds["up"] = time.monotonic() - started
    after = _cli(engine, project, kube_env, "preview", "--json", program=program)
    yield Adoption(
        project=project,
        document=document,
        printed=done.stdout,
        keycloak_ids=keycloak_ids,
        refused=refused,
        imported=imported,
        unforced=unforced,
        preview=preview,
        up=up,
        after=after,
        live_before=live_before,
        live_after=_live(cluster),
        seconds=seconds,
    )


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


def _documents(text: str) -> list[dict[str, Any]]:
    """Every JSON object of ``import --json``'s output (its preview, then its events)."""
    decoder, found, index = json.JSONDecoder(), [], 0
    while text[index:].strip():
        index = len(text) - len(text[index:].lstrip())
        value, index = decoder.raw_decode(text, index)
        found.append(value)
    return found


def _steps(result: Result) -> dict[str, tuple[str, list[str]]]:
    """logical name → (op, sorted detailed-diff keys) of a ``preview --json``'s steps other
    than ``same`` (the real CLI lists unchanged resources only as the stack's ``same``)."""
    return {
        step["urn"].split("::")[-1]: (step["op"], sorted(step.get("detailedDiff") or {}))
        for step in result.json()["steps"]
        if step["op"] != "same"
    }


LABEL = 'metadata.labels["hypershell.redhat.io/gateway"]'
"""The program's own label, which upstream's objects lack: every imported object gets it."""
REISSUED_TLS = [
    'data["ca.crt"]',
    'data["tls.crt"]',
    'data["tls.key"]',
    "metadata.annotations",  # cert-manager's annotations go ...
    'metadata.labels["app.kubernetes.io/component"]',  # ... and the program's labels come
    'metadata.labels["app.kubernetes.io/managed-by"]',
    'metadata.labels["app.kubernetes.io/name"]',
    'metadata.labels["controller.cert-manager.io/fao"]',
    LABEL,
    'metadata.labels["hypershell.redhat.io/managed"]',
]
SERVER_DEFAULTS = {
    # Fields the API server defaulted, now in the imported state and not in the program: shown
    # as deletions, not applied as such (server-side apply leaves fields it does not own), and
    # gone from the state after the up (the next preview has no change).
    "legacy-ns": ['metadata.labels["kubernetes.io/metadata.name"]', "spec"],
    "legacy-workload-svc": [
        "spec.internalTrafficPolicy",
        "spec.ipFamilies",
        "spec.ipFamilyPolicy",
        "spec.sessionAffinity",
    ],
}
EXPECTED_PREVIEW = {
    # README, "Adopting gateways made by the upstream controller": what the first up does.
    # Created: the patch that takes over the shared node-reader ClusterRole, the default-deny
    # NetworkPolicy upstream never makes, the trusted-CA ConfigMap (taken over by server-side
    # apply where upstream copied one, as here), the Exposure component (no objects: no ingress).
    "kind-node-reader": ("create", []),
    "legacy-exposure": ("create", []),
    "legacy-workload-trusted-ca": ("create", []),
    "legacy-workload-netpol-default-deny-ingress": ("create", []),
    # Keys reissued: TLS Secrets and JWT keys, the database password (and so the URI).
    "legacy-pki-server-tls": ("update", REISSUED_TLS),
    "legacy-pki-client-tls": ("update", REISSUED_TLS),
    "legacy-pki-jwt-keys": (
        "update",
        ["data.kid", 'data["public.pem"]', 'data["signing.pem"]', "metadata.labels"],
    ),
    "legacy-database-db-credentials": ("update", ["data.password", "data.uri", LABEL]),
    # The program's gateway.toml (the OIDC table, its own settings), and the pod it rolls.
    "legacy-workload-config": ("update", ['data["gateway.toml"]', LABEL]),
    "legacy-workload-deploy": (
        "update",
        [
            LABEL,
            "spec.progressDeadlineSeconds",
            "spec.revisionHistoryLimit",
            "spec.template.metadata.annotations",  # the config hash: the pod rolls
            'spec.template.metadata.labels["hypershell.redhat.io/gateway"]',
            "spec.template.spec.containers[0].env[2]",  # SSL_CERT_FILE: the trusted CA
            "spec.template.spec.containers[0].imagePullPolicy",
            "spec.template.spec.containers[0].livenessProbe.httpGet.scheme",
            "spec.template.spec.containers[0].livenessProbe.successThreshold",
            "spec.template.spec.containers[0].readinessProbe.httpGet.scheme",
            "spec.template.spec.containers[0].readinessProbe.successThreshold",
            "spec.template.spec.containers[0].startupProbe.httpGet.scheme",
            "spec.template.spec.containers[0].startupProbe.successThreshold",
            "spec.template.spec.containers[0].terminationMessagePath",
            "spec.template.spec.containers[0].terminationMessagePolicy",
            "spec.template.spec.containers[0].volumeMounts[4]",  # the trusted CA's mount
            "spec.template.spec.dnsPolicy",
            "spec.template.spec.restartPolicy",
            "spec.template.spec.schedulerName",
            "spec.template.spec.securityContext.seccompProfile",
            "spec.template.spec.serviceAccount",
            "spec.template.spec.volumes[0].configMap.defaultMode",
            "spec.template.spec.volumes[4]",  # the trusted CA's volume
        ],
    ),
    # The label only; the KEK's data is create-only (ignoreChanges) and is kept.
    "legacy-workload-kek": ("update", [LABEL]),
    "legacy-ns": ("update", [LABEL, *SERVER_DEFAULTS["legacy-ns"]]),
    "legacy-workload-svc": ("update", [LABEL, *SERVER_DEFAULTS["legacy-workload-svc"]]),
    **{
        name: ("update", [LABEL])
        for name in (
            "legacy-workload-sa",
            "legacy-workload-sandbox-sa",
            "legacy-workload-sandbox-role",
            "legacy-workload-sandbox-rb",
            "legacy-workload-node-reader-crb",
            "legacy-workload-netpol-gateway-sandbox-ssh",
            "legacy-workload-netpol-gateway-sandbox-ssh-v2",
            "legacy-workload-netpol-gateway-allow-sandbox-v2",
        )
    },
}


def test_import_file_names_the_live_objects(
    adoption: Adoption, cluster: Cluster, postgres: pg_server.Server, keycloak: Keycloak
) -> None:
    rows = [r for r in adoption.document["resources"] if "id" in r]
    by_package = Counter(package_of(r["type"]) for r in rows)
    assert dict(by_package) == {"kubernetes": 17, "postgresql": 2, "keycloak": 3}
    # Every Kubernetes row's id is an object upstream's templates made, and nothing else.
    live = set()
    for row in rows:
        if package_of(row["type"]) != "kubernetes":
            continue
        namespace, _, name = row["id"].rpartition("/")
        kind = row["type"].rsplit(":", 1)[-1]
        found = cluster.get(kind.lower(), name, namespace=namespace or None)
        live.add((found["kind"], found["metadata"].get("namespace", ""), found["metadata"]["name"]))
    assert len(live) == 17
    # The PostgreSQL rows: the role and the database exist in the real server, the database
    # owned by the role, as CNPG made them.
    postgres_ids = {r["type"]: r["id"] for r in rows if package_of(r["type"]) == "postgresql"}
    assert postgres_ids == {
        "postgresql:index/role:Role": DATABASE,
        "postgresql:index/database:Database": DATABASE,
    }
    with postgres.superuser() as connection:
        role = connection.execute(
            "SELECT rolcanlogin FROM pg_roles WHERE rolname = %s", (DATABASE,)
        ).fetchall()
        owner = connection.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = %s", (DATABASE,)
        ).fetchall()
    assert role == [(True,)]
    assert owner == [(DATABASE,)]
    # The Keycloak rows: <realm>/<uuid> of upstream's client and roles, as the admin API
    # answers for the client id and role names (what an operator reads off the admin console).
    keycloak_ids = {r["logicalName"]: r["id"] for r in rows if package_of(r["type"]) == "keycloak"}
    admin = keycloak.admin_token()
    (client,) = _ok(
        keycloak.admin("GET", f"/{REALM}/clients", admin, params={"clientId": UPSTREAM_CLIENT}),
        200,
    ).json()
    roles = _ok(keycloak.admin("GET", f"/{REALM}/clients/{client['id']}/roles", admin), 200)
    by_name = {r["name"]: r["id"] for r in roles.json()}
    ids = {
        "client": client["id"],
        "adminRole": by_name["openshell-admin"],
        "userRole": by_name["openshell-user"],
    }
    assert ids == adoption.keycloak_ids
    assert keycloak_ids == {
        f"{GATEWAY}-identity-client": f"{REALM}/{ids['client']}",
        f"{GATEWAY}-identity-admin-role": f"{REALM}/{ids['adminRole']}",
        f"{GATEWAY}-identity-user-role": f"{REALM}/{ids['userRole']}",
    }
    figure(
        f"adopt: import file of {len(rows)} rows (17 kubernetes, 2 postgresql, 3 keycloak), each"
        " naming a live object; upstream tenant made in"
        f" {adoption.seconds['upstream']:.1f} s"
    )


def test_import_file_prints_the_targets_to_create_first(adoption: Adoption) -> None:
    cluster = f"urn:pulumi:{STACK}::hypershell-gateways::hypershell:cluster:Cluster"
    keycloak_provider = next(k for k in adoption.document["nameTable"] if "providers:keycloak" in k)
    expected = [
        f"{cluster}$pulumi:providers:kubernetes::kind-k8s",
        f"{cluster}$pulumi:providers:postgresql::kind-postgres",
        f"{cluster}::kind",
        keycloak_provider,
    ]
    assert sorted(adoption.document["nameTable"]) == expected
    printed = " ".join(f"--target '{urn}'" for urn in expected)
    assert f"  pulumi up {printed}\n" in adoption.printed
    # The engine created the two it can (the postgresql and keycloak providers are answered
    # by the mocks: e2e/engine.py).
    figure(
        "adopt: `up --target` of the 2 of 4 printed URNs the engine can create in"
        f" {adoption.seconds['targets']:.1f} s"
    )


def test_rows_of_the_providers_that_cannot_be_built_are_refused_here(adoption: Adoption) -> None:
    assert adoption.refused.returncode != 0
    assert (
        "error: preview failed: failed to validate explicit provider config for"
        f" urn:pulumi:{STACK}::hypershell-gateways::hypershell:cluster:Cluster"
        "$pulumi:providers:postgresql::kind-postgres: no resource plugin"
        " 'pulumi-resource-postgresql' found in the workspace at version v3.18.2 or on your"
        " $PATH"
    ) in adoption.refused.stdout


def test_the_engine_imports_every_kubernetes_row(adoption: Adoption) -> None:
    preview, *events = _documents(adoption.imported.stdout)
    ops = Counter(step["op"] for step in preview["steps"])
    # 17 objects and the 5 components the file creates as their parents
    assert dict(ops) == {"import": 22, "same": 1}
    summary = [e["summaryEvent"]["resourceChanges"] for e in events if "summaryEvent" in e]
    # and the stack, the Cluster component and its provider, made before by `up --target`
    assert summary == [{"import": 22, "same": 3}]
    figure(f"adopt: pulumi import of 22 resources in {adoption.seconds['import']:.1f} s")


def test_the_first_preview_without_force_meets_upstreams_field_manager(
    adoption: Adoption,
) -> None:
    assert adoption.unforced.returncode != 0
    errors = [
        d["message"]
        for d in adoption.unforced.json()["diagnostics"]
        if d["severity"] == "error" and "urn" in d
    ]
    assert errors
    for message in errors:
        assert "Server-Side Apply field conflict detected" in message
        assert f'conflict with "{CONTROLLER}"' in message or f'conflicts with "{CONTROLLER}"' in (
            message
        )


def test_preview_replaces_and_deletes_nothing_adopted(adoption: Adoption) -> None:
    steps = _steps(adoption.preview)
    assert steps == EXPECTED_PREVIEW
    updates = sum(1 for op, _ in steps.values() if op == "update")
    figure(f"adopt: preview after import: {updates} updates, 4 creates, 0 replaces, 0 deletes")


def test_the_forced_up_adopts_and_a_second_preview_has_nothing_to_do(adoption: Adoption) -> None:
    events = adoption.up.events()
    assert adoption.up.summary() == {"create": 4, "update": 17, "same": 8}
    assert [e for e in events if e.get("diagnosticEvent", {}).get("severity") == "error"] == []
    assert _steps(adoption.after) == {}
    before, after = adoption.live_before, adoption.live_after
    assert after["kek"] == before["kek"]  # kept: stored credentials stay readable
    assert after["service"] == before["service"]  # same object, same cluster IP
    assert after["db-password"] != before["db-password"]  # reissued
    assert "hypershell.redhat.io/config-hash" in after["template"]  # the pod rolled
    assert "hypershell.redhat.io/config-hash" not in before["template"]
    figure(f"adopt: forced up in {adoption.seconds['up']:.1f} s; the next preview: no change")

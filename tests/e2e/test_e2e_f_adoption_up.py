"""Adoption, for real (issue 24 item 3): after ``pulumi import`` of the Kubernetes and
PostgreSQL rows (tests/e2e/adoption.py), the first preview without force meets upstream's field
manager, the forced one replaces and deletes nothing adopted (docs/adoption.md, "Adopting
gateways made by the upstream controller": what the first up does), and the forced ``up``
adopts, keeping the KEK and the Service, after which a preview has nothing to do.
"""

from __future__ import annotations

import base64
import json

from e2e.engine import Result
from e2e.project import DATABASE_CA
from tests.e2e.adoption import CONTROLLER, DATABASE, STACK, Adoption
from tests.e2e.databases import LaneDatabases
from tests.e2e.lane import figure


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
    "data",  # the new keys and certificates: unknown until the stand-in tls plugin makes them
    "metadata.annotations",  # cert-manager's annotations go ...
    'metadata.labels["app.kubernetes.io/component"]',  # ... and the program's labels come
    'metadata.labels["app.kubernetes.io/managed-by"]',
    'metadata.labels["app.kubernetes.io/name"]',
    'metadata.labels["controller.cert-manager.io/fao"]',
    LABEL,
    'metadata.labels["hypershell.redhat.io/managed"]',
    "stringData",
]
MADE = (
    # The program's keys, certificates and random values, created by the stand-in tls and
    # random plugins (e2e/providers): nothing of upstream's is imported for them. (The
    # database password is made earlier, by step 3's `up --target`: the database owner's
    # provider logs in with it.)
    "legacy-pki-ca-key",
    "legacy-pki-ca",
    "legacy-pki-server-key",
    "legacy-pki-server-csr",
    "legacy-pki-server-cert",
    "legacy-pki-client-key",
    "legacy-pki-client-csr",
    "legacy-pki-client-cert",
    "legacy-pki-jwt-key",
    "legacy-workload-kek-bytes",
)
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
    # docs/adoption.md, "Adopting gateways made by the upstream controller": what the first up does.
    # Created: the patch that takes over the shared node-reader ClusterRole, the default-deny
    # NetworkPolicy upstream never makes, the Exposure component (no objects: no ingress).
    "kind-node-reader": ("create", []),
    "legacy-exposure": ("create", []),
    "legacy-workload-netpol-default-deny-ingress": ("create", []),
    **{name: ("create", []) for name in MADE},
    # The revoke of PUBLIC's privileges through a provider logging in as the tenant role: never
    # imported (the provider's Grant has no importer), made by the first up. The provider
    # itself was made by step 3's `up --target` (the engine creates every provider of a
    # targeted up), with the password it logs in with: so the preview knows that password.
    "legacy-database-db-revoke-public": ("create", []),
    # The imported role gets the program's password (ALTER ROLE ... PASSWORD).
    "legacy-database-db-role": ("update", ["password"]),
    # Keys reissued: TLS Secrets and JWT keys, the database password (and so the URI).
    "legacy-pki-server-tls": ("update", REISSUED_TLS),
    "legacy-pki-client-tls": ("update", REISSUED_TLS),
    "legacy-pki-jwt-keys": ("update", ["data", "metadata.labels", "stringData"]),
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
    # Keycloak, through the keycloak stand-in: the imported client and roles take the
    # program's name, descriptions and the schema defaults upstream's client lacks; the
    # mappers (upstream's deleted first: docs/adoption.md step 5) and default scopes are made.
    "legacy-identity-client": (
        "update",
        ["backchannelLogoutSessionRequired", "name", "useRefreshTokens"],
    ),
    "legacy-identity-admin-role": ("update", ["description"]),
    "legacy-identity-user-role": ("update", ["description"]),
    "legacy-identity-client-scopes": ("create", []),
    "legacy-identity-audience": ("create", []),
    "legacy-identity-sub": ("create", []),
    "legacy-identity-roles-claim": ("create", []),
    # The trusted-CA ConfigMap upstream copied is imported (pulumi-kubernetes 4.29+ would refuse
    # to create it: gatewayctl/deploy/adoption.py): the same bundle, the program's labels.
    "legacy-workload-trusted-ca": ("update", ["metadata.labels"]),
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
    assert steps == EXPECTED_PREVIEW, json.dumps(steps, indent=1, sort_keys=True)
    updates = sum(1 for op, _ in steps.values() if op == "update")
    creates = sum(1 for op, _ in steps.values() if op == "create")
    figure(
        f"adopt: preview after import: {updates} updates, {creates} creates, 0 replaces, 0 deletes"
    )


def test_keycloak_refuses_a_second_mapper_of_the_same_name(adoption: Adoption) -> None:
    """Why docs/adoption.md step 5 deletes upstream's mappers before the first ``up``."""
    status, body = adoption.mapper_refused
    assert status == 409, body
    figure(f"adopt: a second `audience` mapper on upstream's client: {status} {body}")


def test_the_forced_up_adopts_and_a_second_preview_has_nothing_to_do(
    adoption: Adoption, databases: LaneDatabases
) -> None:
    events = adoption.up.events()
    errors = [
        e["diagnosticEvent"]["message"]
        for e in events
        if e.get("diagnosticEvent", {}).get("severity") == "error"
    ]
    assert errors == []
    assert adoption.up.returncode == 0
    # 3 Kubernetes, 4 Keycloak and 1 PostgreSQL creates (the revoke Grant; the owner's provider
    # and its password come from step 3); 18 Kubernetes, 3 Keycloak and 1 PostgreSQL updates
    # (the adopted role's new password).
    summary = adoption.up.summary()
    assert (summary["create"], summary["update"]) == (8 + len(MADE), 22), adoption.up.summary()
    assert _steps(adoption.after) == {}
    before, after = adoption.live_before, adoption.live_after
    assert after["kek"] == before["kek"]  # kept: stored credentials stay readable
    assert after["service"] == before["service"]  # same object, same cluster IP
    assert after["db-password"] != before["db-password"]  # reissued
    # ... on the server too: upstream's password is refused, the Secret's logs in.
    server = databases.by_stack[STACK]
    ca = adoption.project.root / DATABASE_CA
    for secret, expected in (
        (before["db-password"], "password authentication failed"),
        (after["db-password"], f"{DATABASE}@{DATABASE}"),
    ):
        password = base64.b64decode(secret).decode()
        assert server.login(ca, DATABASE, password, DATABASE) == expected
    assert "hypershell.redhat.io/config-hash" in after["template"]  # the pod rolled
    assert "hypershell.redhat.io/config-hash" not in before["template"]
    figure(f"adopt: forced up in {adoption.seconds['up']:.1f} s; the next preview: no change")

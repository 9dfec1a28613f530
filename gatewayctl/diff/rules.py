"""The providers' own rules, read in their source and cited below, as data: which changed
inputs make a provider replace a resource (create-before-delete, or delete-before-replace)
rather than update it in place, and :func:`predict_one`, the operation for one resource whose
inputs change. The plan-level prediction and its warnings are :mod:`gatewayctl.diff.operations`.

**Kubernetes** (pulumi/pulumi-kubernetes ``provider/pkg/provider/diff.go``
``forceNewProperties`` and ``provider/pkg/provider/provider.go`` ``Diff``): a change of
``.metadata.name`` or ``.metadata.namespace`` always replaces; so do per-kind fields
(:data:`K8S_FORCE_NEW`: a Deployment's ``.spec.selector``, a Service's ``.spec.clusterIP``,
a (Cluster)RoleBinding's ``.roleRef``, a Secret's ``.type``, and a Secret's or ConfigMap's data
unless the provider sets ``enableSecretMutable`` / ``enableConfigMapMutable`` (ours do,
``components/cluster.py``) or the object is ``immutable``). Patch resources replace only on
name and namespace. The replacement deletes first when the object is named, and keeps its name
and namespace (``deleteBeforeReplace`` in ``Diff``); otherwise it creates first.

**Bridged providers** (their schemas, ``reference/pulumi/*.json``, carry no
``willReplaceOnChanges``: it was trimmed, and the Terraform providers decide in
``PlanResourceChange`` anyway, so their ``ForceNew``/``RequiresReplace`` attributes are the
rule, :data:`BRIDGED_FORCE_NEW`, cited per type). The bridge answers ``deleteBeforeReplace``
false, so the engine creates the replacement first (pulumi/pulumi
``pkg/resource/deploy/step_generator.go``: delete-before-replace only when the provider or the
resource option asks for it).

**Providers** (:data:`PROVIDER_FORCE_NEW`): a provider's own configuration change replaces it
only when its ``DiffConfig`` says so: pulumi-kubernetes when the active cluster changes
(``provider/pkg/provider/provider.go`` ``DiffConfig``: a change of ``kubeconfig``,
``context`` or ``cluster`` that moves the active cluster, found only through a ``kubeconfig``
input on both sides, or of ``clusterIdentifier``; a context names one cluster here, the
rule for clusters across stacks (docs/design-notes.md); :func:`_cluster_moves`); the bridged
providers never (pulumi-terraform-bridge ``pkg/tfbridge/provider.go`` ``configDiffer``:
only a config key marked ``ForcesProviderReplace``, and pulumi-postgresql and pulumi-keycloak
``provider/resources.go`` mark none).

**Every type the render registers has a rule** (:func:`rule_for`; the components change
nothing by themselves). A type without one is predicted ``unpredicted``, never an update.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from components import tokens
from gatewayctl.diff.plan import object_name

Op = Literal["update", "replace", "replace-delete-first", "unpredicted"]
OP_LABELS: dict[Op, str] = {
    "update": "update in place",
    "replace": "replace (create-before-delete)",
    "replace-delete-first": "replace (delete-before-replace)",
    "unpredicted": "no prediction rule (read the preview)",
}

# pulumi-kubernetes provider/pkg/provider/diff.go (``forceNew``), by "group/version/Kind";
# kinds the program never creates and no one adopts into it (Pod, PersistentVolume,
# ResourceQuota, PodDisruptionBudget) are left out: they would be updates here.
_SELECTOR = (
    ".spec.selector",
    ".spec.selector.matchExpressions",
    ".spec.selector.matchLabels",
)
K8S_FORCE_NEW: dict[str, tuple[str, ...]] = {
    "apps/v1/Deployment": _SELECTOR,
    "apps/v1/DaemonSet": _SELECTOR,
    "apps/v1/StatefulSet": (
        ".spec.podManagementPolicy",
        ".spec.revisionHistoryLimit",
        ".spec.serviceName",
        ".spec.volumeClaimTemplates",
        *_SELECTOR,
    ),
    "batch/v1/Job": (".spec.completions", ".spec.parallelism", ".spec.template", *_SELECTOR),
    "rbac.authorization.k8s.io/v1/RoleBinding": (".roleRef",),
    "rbac.authorization.k8s.io/v1/ClusterRoleBinding": (".roleRef",),
    "v1/Service": (".spec.clusterIP",),
    "v1/PersistentVolumeClaim": (
        ".spec.accessModes",
        ".spec.storageClassName",
        ".spec.volumeName",
        *_SELECTOR,
    ),
    "storage.k8s.io/v1/StorageClass": (".parameters", ".provisioner"),
}
_METADATA_FORCE_NEW = (".metadata.name", ".metadata.namespace")

# Attributes that force a new resource, per Pulumi type token (camelCase, as in plan.json):
BRIDGED_FORCE_NEW: dict[str, frozenset[str] | None] = {
    # hashicorp/terraform-provider-tls internal/provider/resource_private_key.go: algorithm,
    # rsa_bits, ecdsa_curve carry RequiresReplace.
    "tls:index/privateKey:PrivateKey": frozenset({"algorithm", "rsaBits", "ecdsaCurve"}),
    # resource_cert_request.go: every attribute RequiresReplace (None: every input).
    "tls:index/certRequest:CertRequest": None,
    # resource_self_signed_cert.go / resource_locally_signed_cert.go: every input but
    # early_renewal_hours (updated in place) RequiresReplace.
    "tls:index/selfSignedCert:SelfSignedCert": None,
    "tls:index/locallySignedCert:LocallySignedCert": None,
    # hashicorp/terraform-provider-random internal/provider/resource_password.go,
    # resource_bytes.go, resource_string.go ...: every attribute RequiresReplace (no Update).
    "random:index/randomPassword:RandomPassword": None,
    "random:index/randomBytes:RandomBytes": None,
    "random:index/randomString:RandomString": None,
    "random:index/randomId:RandomId": None,
    # keycloak/terraform-provider-keycloak v5.9.0 (pulumi-keycloak's upstream at 6.13;
    # unchanged at main 05accfd8), provider/<file>, the attributes with `ForceNew: true`:
    # resource_keycloak_openid_client.go: realm_id, import.
    "keycloak:openid/client:Client": frozenset({"realmId", "import"}),
    # resource_keycloak_role.go: realm_id, client_id, import.
    "keycloak:index/role:Role": frozenset({"realmId", "clientId", "import"}),
    # resource_keycloak_group_roles.go: realm_id, group_id (role_ids reconciled in place).
    "keycloak:index/groupRoles:GroupRoles": frozenset({"realmId", "groupId"}),
    # resource_keycloak_user_roles.go: realm_id, user_id.
    "keycloak:index/userRoles:UserRoles": frozenset({"realmId", "userId"}),
    # resource_keycloak_openid_client_default_scopes.go: realm_id, client_id.
    "keycloak:openid/clientDefaultScopes:ClientDefaultScopes": frozenset({"realmId", "clientId"}),
    # resource_keycloak_openid_audience_protocol_mapper.go, ..._sub_protocol_mapper.go,
    # ..._user_client_role_protocol_mapper.go: realm_id, client_id, client_scope_id.
    "keycloak:openid/audienceProtocolMapper:AudienceProtocolMapper": frozenset(
        {"realmId", "clientId", "clientScopeId"}
    ),
    "keycloak:openid/subProtocolMapper:SubProtocolMapper": frozenset(
        {"realmId", "clientId", "clientScopeId"}
    ),
    "keycloak:openid/userClientRoleProtocolMapper:UserClientRoleProtocolMapper": frozenset(
        {"realmId", "clientId", "clientScopeId"}
    ),
    # resource_keycloak_generic_role_mapper.go (the console's scope mappings): realm_id,
    # client_id, client_scope_id, role_id, and no UpdateContext: every field.
    "keycloak:index/genericRoleMapper:GenericRoleMapper": None,
    # cyrilgdn/terraform-provider-postgresql postgresql/resource_postgresql_role.go: no
    # ForceNew (name, password ... updated with ALTER ROLE).
    "postgresql:index/role:Role": frozenset(),
    # resource_postgresql_database.go: template, encoding, lc_collate, lc_ctype ForceNew; name
    # and owner are altered in place.
    "postgresql:index/database:Database": frozenset(
        {"template", "encoding", "lcCollate", "lcCtype"}
    ),
    # resource_postgresql_grant.go: role, database, schema, object_type, objects, columns,
    # with_grant_option ForceNew; privileges updated in place.
    "postgresql:index/grant:Grant": frozenset(
        {"role", "database", "schema", "objectType", "objects", "columns", "withGrantOption"}
    ),
}
_IN_PLACE_ONLY: dict[str, frozenset[str]] = {
    "tls:index/selfSignedCert:SelfSignedCert": frozenset({"earlyRenewalHours"}),
    "tls:index/locallySignedCert:LocallySignedCert": frozenset({"earlyRenewalHours"}),
}
"""tls certificates: updated in place (no RequiresReplace), the exception to None above."""

PROVIDER_FORCE_NEW: dict[str, frozenset[str]] = {
    # pulumi-kubernetes provider/pkg/provider/provider.go DiffConfig: the active cluster moves.
    "pulumi:providers:kubernetes": frozenset(
        {"kubeconfig", "context", "cluster", "clusterIdentifier", "renderYamlToDirectory"}
    ),
    # pulumi-terraform-bridge pkg/tfbridge/provider.go configDiffer: no key of these providers
    # is marked ForcesProviderReplace (their provider/resources.go): updated in place.
    "pulumi:providers:postgresql": frozenset(),
    "pulumi:providers:keycloak": frozenset(),
}

KUBERNETES_TYPES = frozenset(
    {
        # pulumi-kubernetes provider/pkg/provider/diff.go forceNew: per-kind entries
        # (:data:`K8S_FORCE_NEW`) ...
        "kubernetes:apps/v1:Deployment",
        "kubernetes:core/v1:Service",
        "kubernetes:core/v1:Secret",
        "kubernetes:core/v1:ConfigMap",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        # ... and kinds with none there: only .metadata.name and .metadata.namespace replace.
        "kubernetes:core/v1:Namespace",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy",
        "kubernetes:rbac.authorization.k8s.io/v1:Role",
        "kubernetes:route.openshift.io/v1:Route",
        "kubernetes:gateway.networking.k8s.io/v1:GRPCRoute",
        "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute",
        "kubernetes:gateway.networking.k8s.io/v1:BackendTLSPolicy",
        # Patch resources (kinds.IsPatchResource): only the identity replaces.
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRolePatch",
    }
)
"""The Kubernetes types the program registers, each checked against ``forceNew``."""


RuleKind = Literal["component", "kubernetes", "bridged", "provider"]

COMPONENT_PREFIXES = (f"{tokens.PACKAGE}:", "pulumi:pulumi:")
"""The component types' prefixes: the program's own components and the stack."""


def is_component(type_: str) -> bool:
    """A component (or the stack): it changes nothing by itself."""
    return type_.startswith(COMPONENT_PREFIXES)


def forces_new(type_: str, key: str) -> bool:
    """A change of top-level input ``key`` replaces a bridged resource or provider of
    ``type_``: the one reading of :data:`BRIDGED_FORCE_NEW`, :data:`_IN_PLACE_ONLY` and
    :data:`PROVIDER_FORCE_NEW`, for the prediction here and the lane's stand-in providers
    (``e2e/providers/base.py``)."""
    if type_ in PROVIDER_FORCE_NEW:
        return key in PROVIDER_FORCE_NEW[type_]
    attributes = BRIDGED_FORCE_NEW[type_]
    if attributes is None:
        return key not in _IN_PLACE_ONLY.get(type_, frozenset())
    return key in attributes


def rule_for(type_: str) -> RuleKind | None:
    """Which rule predicts ``type_``; None: no rule (``unpredicted``)."""
    if is_component(type_):
        return "component"
    if type_ in KUBERNETES_TYPES:
        return "kubernetes"
    if type_ in BRIDGED_FORCE_NEW:
        return "bridged"
    if type_ in PROVIDER_FORCE_NEW:
        return "provider"
    return None


def changed_paths(old: object, new: object, prefix: str = "") -> list[str]:
    """Dotted paths (``[i]`` for list items) of every leaf that differs."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        paths: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in old or key not in new:
                paths.append(path)
            else:
                paths += changed_paths(old[key], new[key], path)
        return paths
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            p
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for p in changed_paths(a, b, f"{prefix}[{i}]")
        ]
    return [] if old == new else [prefix]


def _pattern(prop: str) -> re.Pattern[str]:
    escaped = re.escape(prop.lstrip(".")).replace(r"\[\*\]", r"\[\d+\]")
    return re.compile(escaped)


def _touches(path: str, prop: str) -> bool:
    """``path`` is ``prop``, inside it, or holds it (a parent added or removed whole)."""
    pattern = _pattern(prop)
    if pattern.fullmatch(path) or any(
        pattern.fullmatch(path[:i]) for i, c in enumerate(path) if c in ".["
    ):
        return True
    return prop.lstrip(".").startswith(path + ".") or prop.lstrip(".").startswith(path + "[")


def _gvk(inputs: Mapping[str, Any]) -> str:
    return f"{inputs.get('apiVersion', '')}/{inputs.get('kind', '')}"


def _truthy(value: object) -> bool:
    return value is True or value == "true"


def kubernetes_force_new(
    type_: str, inputs: Mapping[str, Any], provider: Mapping[str, Any]
) -> tuple[str, ...]:
    """``forceNewProperties`` for one object under a provider with ``provider`` inputs."""
    if type_.endswith("Patch"):  # kinds.IsPatchResource: only the identity replaces
        return _METADATA_FORCE_NEW
    props = list(_METADATA_FORCE_NEW)
    kind = inputs.get("kind")
    immutable = _truthy(inputs.get("immutable"))
    if kind == "Secret":
        mutable = _truthy(provider.get("enableSecretMutable")) and not immutable
        props += [".type"] if mutable else [".type", ".stringData", ".data"]
    elif kind == "ConfigMap":
        if not (_truthy(provider.get("enableConfigMapMutable")) and not immutable):
            props += [".binaryData", ".data"]
    else:
        props += K8S_FORCE_NEW.get(_gvk(inputs), ())
    return tuple(props)


def _ignored(path: str, ignore: Iterable[str]) -> bool:
    return any(path == i or path.startswith(i + ".") or path.startswith(i + "[") for i in ignore)


def predict_one(
    type_: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    provider: Mapping[str, Any] | None = None,
    ignore_changes: Iterable[str] = (),
) -> tuple[Op, tuple[str, ...]] | None:
    """The op for one resource whose inputs go from ``old`` to ``new``; None when unchanged."""
    if old == new:  # no leaf differs (what changed_paths would find): most of a big stack
        return None
    ignore = list(ignore_changes)
    paths = [p for p in changed_paths(old, new) if not _ignored(p, ignore)]
    if not paths:
        return None
    rule = rule_for(type_)
    if rule == "kubernetes":
        props = kubernetes_force_new(type_, new, provider or {})
        forcing = tuple(p for p in paths if any(_touches(p, prop) for prop in props))
        if not forcing:
            return "update", tuple(paths)
        # provider.go Diff: deleteBeforeReplace when named and keeping name and namespace.
        same_identity = object_name(old) == object_name(new) and object_name(new)[0] is not None
        return ("replace-delete-first" if same_identity else "replace"), forcing
    if rule in ("bridged", "provider"):
        top = [(p, p.split(".", 1)[0].split("[", 1)[0]) for p in paths]
        forcing = tuple(p for p, key in top if forces_new(type_, key))
        if type_ == KUBERNETES_PROVIDER:
            forcing = _cluster_moves(old, new, forcing)
        return ("replace", forcing) if forcing else ("update", tuple(paths))
    if rule == "component":
        return None
    return "unpredicted", tuple(paths)


def with_option(op: Op, resource: Mapping[str, Any]) -> Op:
    """``op`` as the resource's ``deleteBeforeReplace`` option makes it: the option overrides
    the provider's choice for every replacement (pulumi/pulumi v3.274.0
    ``pkg/resource/deploy/step_generator.go``: ``goal.DeleteBeforeReplace`` over
    ``diff.DeleteBeforeReplace``)."""
    option = resource.get("deleteBeforeReplace")
    if op == "replace" and option is True:
        return "replace-delete-first"
    if op == "replace-delete-first" and option is False:
        return "replace"
    return op


KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"


ACTIVE_CLUSTER_KEYS = frozenset({"kubeconfig", "context", "cluster"})
"""The provider inputs that name the active cluster (pulumi-kubernetes ``util.go``
``getActiveClusterFromConfig``)."""


def _cluster_moves(
    old: Mapping[str, Any], new: Mapping[str, Any], forcing: tuple[str, ...]
) -> tuple[str, ...]:
    """pulumi-kubernetes ``DiffConfig``'s exceptions: ``clusterIdentifier`` replaces only when
    it changes (not when it is added or removed), and a ``clusterIdentifier`` kept the same
    means the cluster is the same whatever else changed.

    ``kubeconfig``, ``context`` and ``cluster`` replace only when the active cluster is found
    in the old and in the new ``kubeconfig`` input and differs (``DiffConfig``: ``oldFound &&
    found && !reflect.DeepEqual(...)``). Without a ``kubeconfig`` input (the operator's own
    kubeconfig, no ``KUBECONFIG`` in the program's environment: the Python SDK puts its value
    there, ``pulumi_kubernetes/provider.py``), ``parseKubeconfigPropertyValue`` yields an empty
    config, the active cluster is never found, and a context change is an update in place: the
    real engine's answer in ``tests/e2e/test_e2e_e_predictions.py``. With one on both sides the
    render cannot read the kubeconfig, and a changed context or cluster is taken to move the
    cluster (docs/design-notes.md: a context names one cluster)."""
    key = "clusterIdentifier"
    if key in old and key in new and old[key] == new[key]:
        return ()
    found = "kubeconfig" in old and "kubeconfig" in new
    return tuple(
        p
        for p in forcing
        if (p != key or (key in old and key in new)) and (found or p not in ACTIVE_CLUSTER_KEYS)
    )

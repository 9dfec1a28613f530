"""What the real providers will do with each changed plan resource: update it in place, or
replace it (create-before-delete, or delete-before-replace), by the providers' own rules, read
in their source and cited below. Also the replacements people must hear about: a new tenant
CA (clients must re-pin it), a new database password, a recreated namespace.

Only resources present on both sides with different inputs are predicted here; added and
removed resources are creates and deletes.

**Kubernetes** (pulumi/pulumi-kubernetes ``provider/pkg/provider/diff.go``
``forceNewProperties`` and ``provider/pkg/provider/provider.go`` ``Diff``): a change of
``.metadata.name`` or ``.metadata.namespace`` always replaces; so do per-kind fields
(:data:`K8S_FORCE_NEW`: a Deployment's ``.spec.selector``, a Service's ``.spec.clusterIP``,
a (Cluster)RoleBinding's ``.roleRef``, a Secret's ``.type``, and a Secret's or ConfigMap's data
unless the provider sets ``enableSecretMutable`` / ``enableConfigMapMutable`` (ours do,
``components/cluster.py``) or the object is ``immutable``). Patch resources replace only on
name and namespace. The replacement deletes first when the object is named, and keeps its name
and namespace (``deleteBeforeReplace`` in ``Diff``); otherwise it creates first.

**Bridged providers** (their schemas, ``../shared/schemas/pulumi/*.json``, carry no
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
``provider/resources.go`` mark none). A resource whose provider is replaced is replaced too,
created before the old one is deleted; one that moves to a provider of another name (a
cluster key renamed) is replaced only when the new provider's ``DiffConfig`` of the old
configuration says replace (pulumi/pulumi ``step_generator.go`` ``providerChanged``, then
``ReplaceKeys: ["provider"]``).

**Every type the render registers has a rule** (:func:`rule_for`; the components change
nothing by themselves). A type without one is predicted ``unpredicted``, never an update.

**Hazards** (:func:`hazards`): a resource created while another one of the same physical
identity is deleted in the same ``up`` (a renamed logical name, a renamed cluster key). The
engine creates before it deletes what the program no longer registers (deletes come last,
``step_generator.go`` ``GenerateDeletes``), so the create meets the object that still exists:
pulumi-kubernetes refuses it with AlreadyExists (``provider/pkg/await/await.go`` ``Creation``,
a client-side create unless the kind is a Patch), and so does Keycloak for a client id or role
name, and PostgreSQL for a role or database name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from components import tokens

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


def rule_for(type_: str) -> RuleKind | None:
    """Which rule predicts ``type_``; None: no rule (``unpredicted``)."""
    if type_.startswith((f"{tokens.PACKAGE}:", "pulumi:pulumi:")):
        return "component"
    if type_ in KUBERNETES_TYPES:
        return "kubernetes"
    if type_ in BRIDGED_FORCE_NEW:
        return "bridged"
    if type_ in PROVIDER_FORCE_NEW:
        return "provider"
    return None


CA_TYPE = "tls:index/selfSignedCert:SelfSignedCert"
CA_KEY_SUFFIX = "-ca-key"
PASSWORD_TYPE = "random:index/randomPassword:RandomPassword"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
REPLACEMENT_ROWS = 30
"""Replacement rows in the summary before the rest are named in one line."""
NAMES_LISTED = 8
"""Paths listed per replacement."""
REPLACED_OUTPUTS_NOTE = (
    "A replaced resource's outputs are new (a new key, certificate or password): what uses"
    " them changes too (a certificate signed with a new CA or request is reissued, the"
    " Secrets holding them are updated, the pods roll), which the offline render cannot show."
)


@dataclass(frozen=True, kw_only=True)
class Operation:
    type: str
    name: str
    gateway: str | None
    op: Op
    because: tuple[str, ...]
    """The changed inputs that force the replacement; for an update, every changed input."""
    manifest: str | None = None
    """The object's manifest path, for a Kubernetes object."""

    @property
    def label(self) -> str:
        return OP_LABELS[self.op]


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


def _name(inputs: Mapping[str, Any]) -> tuple[object, object]:
    meta = inputs.get("metadata") if isinstance(inputs.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    return meta.get("name"), meta.get("namespace")


Key = tuple[str, str]


def _urn_key(urn: object) -> Key | None:
    if not isinstance(urn, str) or urn.count("::") < 3:
        return None
    parts = urn.split("::", 3)
    return parts[2].rsplit("$", 1)[-1], parts[3]


def _index(plan: Mapping[str, Any]) -> dict[Key, Mapping[str, Any]]:
    found: dict[Key, Mapping[str, Any]] = {}
    for resource in plan.get("resources", []):
        if isinstance(resource, Mapping):
            found[(str(resource.get("type")), str(resource.get("name")))] = resource
    return found


def _gateway(key: Key, resources: Mapping[Key, Mapping[str, Any]]) -> str | None:
    seen: set[Key] = set()
    current: Key | None = key
    while current is not None and current not in seen:
        if current[0] == tokens.GATEWAY:
            return current[1]
        seen.add(current)
        resource = resources.get(current)
        current = _urn_key(resource.get("parent")) if resource else None
    return None


def manifest_path(
    resource: Mapping[str, Any], resources: Mapping[Key, Mapping[str, Any]]
) -> str | None:
    """The manifest path the render gives the object
    (``gatewayctl.engine.render.manifest_files``)."""
    inputs = resource.get("inputs") or {}
    provider_key = _urn_key(resource.get("provider"))
    provider = resources.get(provider_key) if provider_key else None
    cluster = _urn_key(provider.get("parent")) if provider else None
    name, namespace = _name(inputs)
    if cluster is None or not isinstance(name, str) or not isinstance(inputs.get("kind"), str):
        return None
    where = namespace if isinstance(namespace, str) and namespace else "_cluster"
    return f"manifests/{cluster[1]}/{where}/{inputs['kind'].lower()}-{name}.yaml"


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
        same_identity = _name(old) == _name(new) and _name(new)[0] is not None
        return ("replace-delete-first" if same_identity else "replace"), forcing
    if rule in ("bridged", "provider"):
        attributes = BRIDGED_FORCE_NEW[type_] if rule == "bridged" else PROVIDER_FORCE_NEW[type_]
        top = [(p, p.split(".", 1)[0].split("[", 1)[0]) for p in paths]
        if attributes is None:
            kept = _IN_PLACE_ONLY.get(type_, frozenset())
            forcing = tuple(p for p, key in top if key not in kept)
        else:
            forcing = tuple(p for p, key in top if key in attributes)
        if type_ == KUBERNETES_PROVIDER:
            forcing = _cluster_moves(old, new, forcing)
        return ("replace", forcing) if forcing else ("update", tuple(paths))
    if rule == "component":
        return None
    return "unpredicted", tuple(paths)


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


def _provider_replaced(
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    old_res: Mapping[Key, Mapping[str, Any]],
    new_res: Mapping[Key, Mapping[str, Any]],
) -> bool:
    """The engine's ``providerChanged``: the resource's provider is replaced, or it moves to a
    provider whose ``DiffConfig`` of the old provider's configuration says replace."""
    old_key, new_key = _urn_key(old.get("provider")), _urn_key(new.get("provider"))
    if old_key is None or new_key is None:
        return old_key != new_key
    old_provider, new_provider = old_res.get(old_key), new_res.get(new_key)
    if old_provider is None or new_provider is None:
        return False
    predicted = predict_one(
        new_key[0], old_provider.get("inputs") or {}, new_provider.get("inputs") or {}
    )
    return predicted is not None and predicted[0] != "update"


DATA_DIGEST = "dataDigest"
"""A Secret's plan entry: the digest of its redacted data
(``gatewayctl.engine.render.data_digest``)."""


def _with_data_digest(resource: Mapping[str, Any]) -> Mapping[str, Any]:
    """A resource's inputs; a Secret's with its data digest in ``stringData``, so that a change
    of its redacted data is a change of ``.stringData`` (updated in place under our providers'
    ``enableSecretMutable``, replaced when immutable: :func:`kubernetes_force_new`)."""
    inputs = resource.get("inputs") or {}
    digest = resource.get(DATA_DIGEST)
    if digest is None:
        return inputs
    string_data = inputs.get("stringData")
    merged = dict(string_data) if isinstance(string_data, Mapping) else {}
    return {**inputs, "stringData": {**merged, f"({DATA_DIGEST})": digest}}


def predict(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[Operation]:
    """An :class:`Operation` for every plan resource on both sides whose inputs differ, or
    whose provider is replaced."""
    old_res, new_res = _index(base), _index(head)
    operations: list[Operation] = []
    for key in sorted(old_res.keys() & new_res.keys()):
        old, new = old_res[key], new_res[key]
        if rule_for(key[0]) == "component":
            continue  # components change nothing by themselves
        provider_key = _urn_key(new.get("provider"))
        provider = new_res.get(provider_key) if provider_key else None
        predicted: tuple[Op, tuple[str, ...]] | None
        if _provider_replaced(old, new, old_res, new_res):
            # step_generator.go: ReplaceKeys ["provider"], no delete-before-replace.
            predicted = ("replace", ("provider",))
        else:
            predicted = predict_one(
                key[0],
                _with_data_digest(old),
                _with_data_digest(new),
                (provider or {}).get("inputs") or {},
                [str(i) for i in new.get("ignoreChanges") or []],
            )
        if predicted is None:
            continue
        op, because = predicted
        operations.append(
            Operation(
                type=key[0],
                name=key[1],
                gateway=_gateway(key, new_res),
                op=op,
                because=because,
                manifest=manifest_path(new, new_res) if key[0].startswith("kubernetes:") else None,
            )
        )
    return operations


def _identity(
    resource: Mapping[str, Any], resources: Mapping[Key, Mapping[str, Any]]
) -> tuple[str, ...] | None:
    """The physical object a resource is, where one name can be taken only once: a
    Kubernetes object (not a Patch) on its cluster (the provider's context), a PostgreSQL role
    or database on its server, a Keycloak client or role in its realm. None otherwise."""
    type_ = str(resource.get("type"))
    inputs = resource.get("inputs") or {}
    provider_key = _urn_key(resource.get("provider"))
    provider = resources.get(provider_key) if provider_key else None
    config = (provider or {}).get("inputs") or {}
    if type_.startswith("kubernetes:"):
        if type_.endswith("Patch"):
            return None  # a server-side apply: it takes the object over (await.go Creation)
        name, namespace = _name(inputs)
        cluster = config.get("context") or (provider_key[1] if provider_key else "")
        group = str(inputs.get("apiVersion", "")).rsplit("/", 1)[0]
        return (
            "kubernetes",
            str(cluster),
            group,
            str(inputs.get("kind")),
            str(namespace),
            str(name),
        )
    server = f"{config.get('host')}:{config.get('port')}"
    if type_ in ("postgresql:index/role:Role", "postgresql:index/database:Database"):
        return (type_, server, str(inputs.get("name")))
    realm = (str(config.get("url")), str(inputs.get("realmId")))
    if type_ == "keycloak:openid/client:Client":
        return (type_, *realm, str(inputs.get("clientId")))
    if type_ == "keycloak:index/role:Role":
        return (type_, *realm, str(inputs.get("clientId")), str(inputs.get("name")))
    return None


def _what(type_: str) -> str:
    return type_.rsplit(":", 1)[-1]


def hazards(
    base: Mapping[str, Any], head: Mapping[str, Any], operations: Iterable[Operation]
) -> list[str]:
    """Creates that meet an object the same ``up`` deletes only later (AlreadyExists), and
    cluster keys renamed on the same cluster."""
    old_res, new_res = _index(base), _index(head)
    replaced = {(o.type, o.name) for o in operations if o.op == "replace"}
    deleted: dict[tuple[str, ...], Key] = {}
    for key in sorted((old_res.keys() - new_res.keys()) | (replaced & old_res.keys())):
        identity = _identity(old_res[key], old_res)
        if identity is not None:
            deleted.setdefault(identity, key)
    found: list[str] = []
    for key in sorted((new_res.keys() - old_res.keys()) | (replaced & new_res.keys())):
        identity = _identity(new_res[key], new_res)
        if identity is None or identity not in deleted:
            continue
        gone = deleted[identity]
        gateway = _gateway(key, new_res)
        who = f"gateway `{gateway}`" if gateway else "the stack"
        same = "its own old object" if gone == key else f"`{gone[1]}`"
        found.append(
            f"{who}: the `up` would fail: {_what(key[0])} `{key[1]}` is created while {same},"
            f" the same {_what(key[0])} (`{identity[-1]}`), still exists (the engine deletes it"
            " only after the creates): the provider refuses it with AlreadyExists. Keep the"
            " logical name (an alias), or delete the old one first."
        )
    # A cluster key renamed: its providers and Cluster component are deleted and created under
    # the new key; the gateways move to the new providers (no replacement when their
    # configuration is the same: step_generator.go providerChanged).
    removed = {
        old_res[k].get("inputs", {}).get("context"): k
        for k in old_res.keys() - new_res.keys()
        if k[0] == KUBERNETES_PROVIDER
    }
    for key in sorted(new_res.keys() - old_res.keys()):
        context = (new_res[key].get("inputs") or {}).get("context")
        if key[0] != KUBERNETES_PROVIDER or context is None or context not in removed:
            continue
        old_cluster = _urn_key(old_res[removed[context]].get("parent"))
        new_cluster = _urn_key(new_res[key].get("parent"))
        found.append(
            f"the stack: the cluster key `{old_cluster[1] if old_cluster else removed[context][1]}`"
            f" becomes `{new_cluster[1] if new_cluster else key[1]}` on the same cluster (context"
            f" `{context}`): its Cluster component and providers are deleted and created under"
            " the new key, and every resource of the cluster changes provider."
        )
    return sorted(set(found))


def warnings(operations: Iterable[Operation]) -> list[str]:
    """Plain words for the replacements that reach people."""
    found: list[str] = []
    operations = list(operations)
    for item in operations:
        if item.type == KUBERNETES_PROVIDER and item.op == "update":
            keys = sorted(ACTIVE_CLUSTER_KEYS.intersection(item.because))
            if keys:
                found.append(
                    f"the stack: `{item.name}` changes {', '.join(f'`{k}`' for k in keys)}"
                    " and is updated in place (no `kubeconfig` input to find the active cluster"
                    " in, or the same `clusterIdentifier`): nothing is recreated; if it now"
                    " names another cluster, the objects in the state are looked for there."
                )
        if item.op == "update":
            continue
        who = f"gateway `{item.gateway}`" if item.gateway else "the stack"
        if item.type == KUBERNETES_PROVIDER:
            moved = sum(o.because == ("provider",) for o in operations)
            found.append(
                f"{who}: the cluster behind `{item.name}` is replaced"
                f" ({', '.join(f'`{p}`' for p in item.because)} changes): its {moved}"
                " resource(s) are created on the new cluster and deleted from the old one."
            )
            continue
        if item.type == CA_TYPE or (
            item.type == "tls:index/privateKey:PrivateKey" and item.name.endswith(CA_KEY_SUFFIX)
        ):
            found.append(
                f"{who}: a new tenant CA (`{item.name}` is replaced): every client must re-pin"
                " the new CA certificate, and every certificate it signed is reissued."
            )
        elif item.type == PASSWORD_TYPE:
            found.append(
                f"{who}: a new database password (`{item.name}` is replaced): the role's"
                " password and the credentials Secret change, and the gateway's pods restart."
            )
        elif item.type == NAMESPACE_TYPE:
            found.append(
                f"{who}: the namespace is recreated (`{item.name}`, {item.label}): every object"
                " in it is deleted with the old one."
            )
    return sorted(set(found))


def summary_lines(operations: Sequence[Operation], danger: Sequence[str] = ()) -> list[str]:
    """What the providers will do with the changed resources, replacements by name, and the
    warnings people must read: the report's summary section (``gatewayctl.diff.report``)."""
    if not operations and not danger:
        return []
    counts = Counter(o.op for o in operations)
    totals = ", ".join(
        f"{counts[op]} {label}"
        for op, label in OP_LABELS.items()
        if op != "unpredicted" or counts[op]
    )
    lines = [f"**Predicted operations** (by the providers' rules): {totals}", ""]
    lines += [f"> **Warning:** {warning}" for warning in [*danger, *warnings(operations)]]
    if lines[-1] != "":
        lines.append("")
    updates = Counter(o.type.rsplit(":", 1)[-1] for o in operations if o.op == "update")
    if updates:
        listed = ", ".join(f"{kind} {count}" for kind, count in sorted(updates.items()))
        lines += [f"Updated in place: {listed}.", ""]
    replaced = [o for o in operations if o.op != "update"]
    if replaced:
        lines += ["| Resource | Gateway | Operation | Because |", "|---|---|---|---|"]
        for item in replaced[:REPLACEMENT_ROWS]:
            because = ", ".join(f"`{p}`" for p in item.because[:NAMES_LISTED])
            more = len(item.because) - NAMES_LISTED
            because += f" and {more} more" if more > 0 else ""
            lines.append(
                f"| {item.type.rsplit(':', 1)[-1]} `{item.name}` | `{item.gateway or '-'}`"
                f" | {item.label} | {because} |"
            )
        rest = replaced[REPLACEMENT_ROWS:]
        if rest:
            names = ", ".join(f"`{o.name}` ({o.label})" for o in rest)
            lines.append(f"| ... | | | {len(rest)} more: {names} |")
        lines += ["", REPLACED_OUTPUTS_NOTE, ""]
    return lines

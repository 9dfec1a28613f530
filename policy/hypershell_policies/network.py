"""Exposure and isolation: passthrough Routes, default-deny tenant namespaces, and server
certificates that cover the exposed hostnames."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import (
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from ._props import GATEWAY_LABEL, MANAGED_LABEL, describe, elements, get, kind_of
from .exposures import EXPOSING, GATEWAY_EXPOSURES, ROUTE, is_console_route, to_console

GATEWAY_COMPONENT = "hypershell:gateway:Gateway"
CERT_REQUEST = "tls:index/certRequest:CertRequest"
SERVER_CSR_SUFFIX = "-pki-server-csr"
NAMESPACE = ("core", "Namespace")
NETWORK_POLICY = ("networking.k8s.io", "NetworkPolicy")


# --- Routes ----------------------------------------------------------------------------------


def validate_route_tls(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if kind_of(args.resource_type) != ROUTE or is_console_route(args.props):
        return
    what = describe(args.resource_type, args.props, args.name)
    tls = get(args.props, "spec", "tls")
    termination = get(tls, "termination")
    if termination != "passthrough":
        got = "not set" if termination is None else repr(termination)
        report(
            f"{what}: spec.tls.termination is {got}; only 'passthrough' is allowed"
            " (the gateway terminates TLS itself, with the tenant CA)",
            None,
        )
    insecure = get(tls, "insecureEdgeTerminationPolicy")
    if insecure not in (None, "None"):
        report(
            f"{what}: spec.tls.insecureEdgeTerminationPolicy is {insecure!r}; must be 'None'"
            " (no plain-HTTP listener for a gRPC endpoint)",
            None,
        )


route_passthrough = ResourceValidationPolicy(
    name="route-passthrough-tls",
    description="OpenShift Routes use TLS passthrough only (the web console's: console-tls-only).",
    validate=validate_route_tls,
)


# --- tenant namespaces -----------------------------------------------------------------------

Cell = tuple[str | None, str]
"""A namespace on a cluster: (URN of the cluster's Kubernetes provider, namespace name)."""


def _cell(resource: PolicyResource, namespace: Any) -> Cell | None:
    if not isinstance(namespace, str):
        return None
    return (resource.provider.urn if resource.provider else None, namespace)


def _of_kind(
    resources: Sequence[PolicyResource], group_kind: tuple[str, str]
) -> Iterator[PolicyResource]:
    return (r for r in resources if kind_of(r.resource_type) == group_kind)


def tenant_namespaces(resources: Sequence[PolicyResource]) -> dict[Cell, PolicyResource]:
    """Namespaces labelled ``hypershell.redhat.io/managed=true``, by cluster and name."""
    tenants: dict[Cell, PolicyResource] = {}
    for resource in _of_kind(resources, NAMESPACE):
        if get(resource.props, "metadata", "labels", MANAGED_LABEL) == "true":
            cell = _cell(resource, get(resource.props, "metadata", "name"))
            if cell is not None:
                tenants[cell] = resource
    return tenants


def is_default_deny_ingress(spec: Any) -> bool:
    """Selects every pod, is an Ingress policy, and allows nothing in."""
    selector = get(spec, "podSelector")
    return (
        isinstance(selector, Mapping)
        and not get(selector, "matchLabels")
        and not get(selector, "matchExpressions")
        and "Ingress" in elements(get(spec, "policyTypes"))
        and not elements(get(spec, "ingress"))
    )


def validate_default_deny(args: StackValidationArgs, report: ReportViolation) -> None:
    denied = {
        _cell(policy, get(policy.props, "metadata", "namespace"))
        for policy in _of_kind(args.resources, NETWORK_POLICY)
        if is_default_deny_ingress(get(policy.props, "spec"))
    }
    for cell, namespace in tenant_namespaces(args.resources).items():
        if cell not in denied:
            report(
                f"Namespace {cell[1]}: no default-deny ingress NetworkPolicy"
                " (spec.podSelector {}, spec.policyTypes [Ingress], no spec.ingress rules)"
                " in this tenant namespace",
                namespace.urn,
            )


tenant_default_deny = StackValidationPolicy(
    name="tenant-default-deny-ingress",
    description=(
        "Every tenant namespace (label hypershell.redhat.io/managed=true) has a default-deny"
        " ingress NetworkPolicy."
    ),
    validate=validate_default_deny,
)


# --- server certificate SANs -----------------------------------------------------------------


def gateway_of(resource: PolicyResource) -> str | None:
    """The Gateway component a resource belongs to: its nearest ``hypershell:gateway:Gateway``
    ancestor; for a resource registered outside one, its ``hypershell.redhat.io/gateway`` label."""
    parent = resource.parent
    while parent is not None:
        if parent.resource_type == GATEWAY_COMPONENT:
            return parent.name
        parent = parent.parent
    label = get(resource.props, "metadata", "labels", GATEWAY_LABEL)
    return label if isinstance(label, str) else None


def exposed_hosts(resource: PolicyResource) -> list[tuple[str, Any]]:
    """``(field, host)`` an exposing object serves (``exposures.EXPOSING``)."""
    found = EXPOSING.get(kind_of(resource.resource_type) or ("", ""))
    return found.hosts(resource.props) if found is not None else []


def covers(san: str, host: str) -> bool:
    """A DNS SAN covers a host exactly or, as ``*.<domain>``, one label under the domain."""
    san, host = san.lower(), host.lower()
    if san.startswith("*."):
        return host.count(".") == san.count(".") and host.endswith(san[1:]) and host[0] != "*"
    return san == host


def validate_server_sans(args: StackValidationArgs, report: ReportViolation) -> None:
    tenants = tenant_namespaces(args.resources)
    requests = {
        r.name: r
        for r in args.resources
        if r.resource_type == CERT_REQUEST and r.name.endswith(SERVER_CSR_SUFFIX)
    }
    # The console's Route is served with the router's certificate, not the gateway's.
    routes = [
        r
        for r in args.resources
        if kind_of(r.resource_type) in GATEWAY_EXPOSURES
        and not to_console(kind_of(r.resource_type), r.props)
    ]
    for route in routes:
        if _cell(route, get(route.props, "metadata", "namespace")) not in tenants:
            continue
        what = describe(route.resource_type, route.props, route.name)
        gateway = gateway_of(route)
        request = requests.get(f"{gateway}{SERVER_CSR_SUFFIX}") if gateway else None
        if request is None:
            report(
                f"{what}: no server certificate request '{gateway}{SERVER_CSR_SUFFIX}' for the"
                f" gateway {gateway!r}, so its certificate cannot be checked",
                route.urn,
            )
            continue
        sans = [str(s) for s in elements(get(request.props, "dnsNames"))]
        for field, host in exposed_hosts(route):
            if not isinstance(host, str):
                report(
                    f"{what}: {field} is not set; the router would generate a host the server"
                    f" certificate ({request.name}) does not cover",
                    route.urn,
                )
            elif not any(covers(san, host) for san in sans):
                report(
                    f"{what}: {field} {host!r} is not among the dnsNames of the server"
                    f" certificate request {request.name} ({', '.join(sans)})",
                    request.urn,
                )


server_cert_covers_host = StackValidationPolicy(
    name="server-cert-covers-host",
    description=(
        "The server certificate of every exposed gateway lists its external hostname among"
        " its SANs."
    ),
    validate=validate_server_sans,
)

"""The lane's ``HybridMonitor`` (e2e/engine.py) takes the mocked packages' URNs out of what it
sends the real engine, and sends a request naming none of them as it is."""

from __future__ import annotations

from typing import Any

from pulumi.runtime.proto import resource_pb2

from e2e.engine import MOCKED_PACKAGES, HybridMonitor


class Received:
    """Stands for the engine's monitor: keeps what it is sent (a unit test of the wrapper)."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        self.requests.append(request)
        return resource_pb2.RegisterResourceResponse(urn=f"urn:real:{request.name}")


def _request(type_: str, name: str, deps: list[str], prop: list[str]) -> Any:
    request = resource_pb2.RegisterResourceRequest(type=type_, name=name, custom=True)
    request.dependencies.extend(deps)
    request.propertyDependencies["data"].urns.extend(prop)
    return request


def test_mocked_urns_are_stripped_and_a_clean_request_passes_as_it_is() -> None:
    real = Received()
    monitor = HybridMonitor(real)
    key = monitor.RegisterResource(
        resource_pb2.RegisterResourceRequest(type="keycloak:openid/client:Client", name="k")
    )
    assert key.urn in monitor.mocked_urns
    other = "urn:pulumi:s::p::kubernetes:core/v1:Namespace::ns"

    with_mocked = _request("kubernetes:core/v1:Secret", "tls", [key.urn, other], [key.urn])
    monitor.RegisterResource(with_mocked)
    sent = real.requests[-1]
    assert sent is not with_mocked
    assert list(sent.dependencies) == [other]
    assert list(sent.propertyDependencies["data"].urns) == []

    clean = _request("kubernetes:core/v1:ConfigMap", "cm", [other], [other])
    monitor.RegisterResource(clean)
    assert real.requests[-1] is clean
    assert [r.name for r in real.requests] == ["tls", "cm"]


def test_the_standins_go_to_the_engine_and_none_stays_mocked() -> None:
    """The stand-in plugins (e2e/providers) serve all four packages: every registration
    reaches the real monitor."""
    assert set() == MOCKED_PACKAGES
    real = Received()
    monitor = HybridMonitor(real)
    for type_ in (
        "tls:index/privateKey:PrivateKey",
        "random:index/randomBytes:RandomBytes",
        "postgresql:index/role:Role",
        "keycloak:openid/client:Client",
    ):
        request = resource_pb2.RegisterResourceRequest(type=type_, name="x")
        monitor.RegisterResource(request)
        assert real.requests[-1] is request
    assert monitor.mocked_urns == set()

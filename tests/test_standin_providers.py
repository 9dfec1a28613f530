"""The lane's stand-in tls and random providers (``e2e/providers``), driven as the engine
drives them: the plugin script started as a process, its port read from its first line, every
call over the provider gRPC protocol (keycloak's: tests/test_standin_keycloak.py)."""

from __future__ import annotations

import base64
import contextlib
import datetime
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import bcrypt
import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from google.protobuf import empty_pb2
from pulumi.provider.experimental.property_value import Computed, PropertyValue
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc
from pulumi.runtime.rpc import UNKNOWN as UNKNOWN_TEXT

from e2e.providers import install, plugin_version
from e2e.providers.base import plain
from gatewayctl.diff.rules import predict_one

KEY = "tls:index/privateKey:PrivateKey"
SELF = "tls:index/selfSignedCert:SelfSignedCert"
CSR = "tls:index/certRequest:CertRequest"
LEAF = "tls:index/locallySignedCert:LocallySignedCert"
PASSWORD = "random:index/randomPassword:RandomPassword"
BYTES = "random:index/randomBytes:RandomBytes"


class Plugin:
    def __init__(self, stub: Any) -> None:
        self.stub = stub

    @staticmethod
    def urn(type_: str, name: str = "r") -> str:
        return f"urn:pulumi:s::p::{type_}::{name}"

    def check(self, type_: str, news: dict[str, Any]) -> Any:
        return self.stub.Check(
            provider_pb2.CheckRequest(urn=self.urn(type_), news=_marshal(news), olds=_marshal({}))
        )

    def create(self, type_: str, inputs: dict[str, Any], *, preview: bool = False) -> Any:
        checked = self.check(type_, inputs)
        assert list(checked.failures) == []
        return self.stub.Create(
            provider_pb2.CreateRequest(
                urn=self.urn(type_), properties=checked.inputs, preview=preview
            )
        )

    def diff(self, type_: str, state: Any, news: dict[str, Any]) -> Any:
        checked = self.check(type_, news)
        return self.stub.Diff(
            provider_pb2.DiffRequest(urn=self.urn(type_), id="x", olds=state, news=checked.inputs)
        )


def _marshal(values: dict[str, Any]) -> Any:
    from e2e.providers.base import wrap

    return PropertyValue.marshal_map({k: wrap(v) for k, v in values.items()})


def values(struct: Any) -> dict[str, Any]:
    return {k: plain(v) for k, v in PropertyValue.unmarshal_map(struct).items()}


def secrets(struct: Any) -> set[str]:
    return {k for k, v in PropertyValue.unmarshal_map(struct).items() if v.is_secret}


@contextlib.contextmanager
def started(
    package: str,
    directory: Path,
    env: dict[str, str] | None = None,
    config: dict[str, Any] | None = None,
) -> Iterator[Plugin]:
    """``pulumi-resource-<package>`` as the engine starts it: its address as the argument (the
    stand-ins never dial it), the port read from the first line it prints; configured with
    ``config`` (the provider's inputs)."""
    script = install(directory) / f"pulumi-resource-{package}"
    proc = subprocess.Popen(
        [str(script), "127.0.0.1:1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            info = stub.GetPluginInfo(empty_pb2.Empty())
            assert info.version == plugin_version(package)
            configured = stub.Configure(
                provider_pb2.ConfigureRequest(acceptSecrets=True, args=_marshal(config or {}))
            )
            assert configured.acceptSecrets and configured.supportsPreview
            yield Plugin(stub)
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def tls_plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plugin]:
    with started("tls", tmp_path_factory.mktemp("plugins")) as plugin:
        yield plugin


@pytest.fixture(scope="module")
def random_plugin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plugin]:
    with started("random", tmp_path_factory.mktemp("plugins")) as plugin:
        yield plugin


def test_versions_are_the_locked_sdk_packages() -> None:
    assert (plugin_version("tls"), plugin_version("random")) == ("5.6.2", "4.21.4")
    assert plugin_version("keycloak") == "6.14.1"


def test_install_writes_one_executable_script_per_package(tmp_path: Path) -> None:
    made = install(tmp_path / "bin")
    names = sorted(p.name for p in made.iterdir())
    assert names == [
        "pulumi-resource-keycloak",
        "pulumi-resource-postgresql",
        "pulumi-resource-random",
        "pulumi-resource-tls",
    ]
    assert all(p.stat().st_mode & 0o111 for p in made.iterdir())


def test_tls_keys_and_certificates_are_real(tls_plugin: Plugin) -> None:
    plugin = tls_plugin
    key = plugin.create(KEY, {"algorithm": "ECDSA", "ecdsaCurve": "P256"})
    state = values(key.properties)
    assert {"privateKeyPem", "privateKeyPemPkcs8", "privateKeyOpenssh"} <= secrets(key.properties)
    private = load_pem_private_key(state["privateKeyPem"].encode(), None)
    assert isinstance(private, ec.EllipticCurvePrivateKey)
    assert private.curve.name == "secp256r1"
    assert state["privateKeyPem"].startswith("-----BEGIN EC PRIVATE KEY-----")
    assert state["publicKeyFingerprintSha256"].startswith("SHA256:")
    assert len(key.id) == 40  # SHA1 hex of the public key PEM

    ca = plugin.create(
        SELF,
        {
            "privateKeyPem": state["privateKeyPem"],
            "isCaCertificate": True,
            "subject": {"commonName": "Test CA", "organization": "HyperShell"},
            "validityPeriodHours": 87600,
            "allowedUses": ["cert_signing", "crl_signing", "digital_signature"],
        },
    )
    ca_state = values(ca.properties)
    ca_cert = x509.load_pem_x509_certificate(ca_state["certPem"].encode())
    assert ca_cert.subject.rfc4514_string() == "O=HyperShell,CN=Test CA"
    assert ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert str(ca_cert.serial_number) == ca.id
    start = datetime.datetime.strptime(ca_state["validityStartTime"], "%Y-%m-%dT%H:%M:%SZ")
    end = datetime.datetime.strptime(ca_state["validityEndTime"], "%Y-%m-%dT%H:%M:%SZ")
    assert end - start == datetime.timedelta(hours=87600)
    assert ca_state["readyForRenewal"] is False

    leaf_key = values(plugin.create(KEY, {"algorithm": "ECDSA", "ecdsaCurve": "P256"}).properties)
    csr = values(
        plugin.create(
            CSR,
            {"privateKeyPem": leaf_key["privateKeyPem"], "dnsNames": ["a.example", "b.example"]},
        ).properties
    )
    leaf = plugin.create(
        LEAF,
        {
            "certRequestPem": csr["certRequestPem"],
            "caPrivateKeyPem": state["privateKeyPem"],
            "caCertPem": ca_state["certPem"],
            "validityPeriodHours": 8760,
            "earlyRenewalHours": 720,
            "allowedUses": ["digital_signature", "key_encipherment", "server_auth"],
        },
    )
    cert = x509.load_pem_x509_certificate(values(leaf.properties)["certPem"].encode())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["a.example", "b.example"]
    assert cert.issuer == ca_cert.subject
    cert.verify_directly_issued_by(ca_cert)
    assert "caPrivateKeyPem" in secrets(leaf.properties)

    # Diff: early_renewal_hours is updated in place; every other input replaces.
    leaf_inputs = {
        k: values(leaf.properties)[k]
        for k in (
            "certRequestPem",
            "caPrivateKeyPem",
            "caCertPem",
            "validityPeriodHours",
            "allowedUses",
        )
    }
    update = plugin.diff(LEAF, leaf.properties, {**leaf_inputs, "earlyRenewalHours": 100})
    assert (list(update.diffs), list(update.replaces)) == (["earlyRenewalHours"], [])
    replace = plugin.diff(
        LEAF, leaf.properties, {**leaf_inputs, "earlyRenewalHours": 720, "validityPeriodHours": 10}
    )
    assert list(replace.replaces) == ["validityPeriodHours"]
    assert replace.deleteBeforeReplace is False
    same = plugin.diff(LEAF, leaf.properties, {**leaf_inputs, "earlyRenewalHours": 720})
    assert same.changes == provider_pb2.DiffResponse.DIFF_NONE
    # The prediction reads the same table.
    assert predict_one(LEAF, {"validityPeriodHours": 1}, {"validityPeriodHours": 2}) == (
        "replace",
        ("validityPeriodHours",),
    )


def test_tls_preview_leaves_computed_outputs_unknown(tls_plugin: Plugin) -> None:
    plugin = tls_plugin
    previewed = plugin.create(KEY, {"algorithm": "ECDSA", "ecdsaCurve": "P256"}, preview=True)
    unmarshalled = PropertyValue.unmarshal_map(previewed.properties)
    assert isinstance(plain(unmarshalled["privateKeyPem"]), Computed)
    assert previewed.properties["publicKeyPem"] == UNKNOWN_TEXT
    assert plain(unmarshalled["algorithm"]) == "ECDSA"
    assert previewed.id == ""


def test_a_certificate_due_for_renewal_reads_ready_and_is_replaced(tls_plugin: Plugin) -> None:
    plugin = tls_plugin
    key = values(plugin.create(KEY, {"algorithm": "ECDSA", "ecdsaCurve": "P256"}).properties)
    inputs = {
        "privateKeyPem": key["privateKeyPem"],
        "subject": {"commonName": "soon"},
        "validityPeriodHours": 10,
        "earlyRenewalHours": 24,  # the early renewal time is already past
        "allowedUses": ["digital_signature"],
    }
    cert = plugin.create(SELF, inputs)
    assert values(cert.properties)["readyForRenewal"] is True
    read = plugin.stub.Read(
        provider_pb2.ReadRequest(urn=plugin.urn(SELF), id=cert.id, properties=cert.properties)
    )
    assert read.id == cert.id and values(read.properties)["readyForRenewal"] is True
    diff = plugin.diff(SELF, read.properties, inputs)
    assert list(diff.replaces) == ["readyForRenewal"]


def test_random_values_are_random_secret_and_as_asked(random_plugin: Plugin) -> None:
    plugin = random_plugin
    first = plugin.create(PASSWORD, {"length": 40, "special": False})
    second = plugin.create(PASSWORD, {"length": 40, "special": False})
    a, b = values(first.properties), values(second.properties)
    assert first.id == "none" and len(a["result"]) == 40 and a["result"].isalnum()
    assert a["result"] != b["result"]
    assert bcrypt.checkpw(a["result"].encode(), a["bcryptHash"].encode())
    assert secrets(first.properties) == {"result", "bcryptHash"}
    assert a["lower"] is True and a["minSpecial"] == 0  # the provider's defaults
    kept = plugin.diff(PASSWORD, first.properties, {"length": 40, "special": False})
    assert kept.changes == provider_pb2.DiffResponse.DIFF_NONE
    rotated = plugin.diff(
        PASSWORD, first.properties, {"length": 40, "special": False, "keepers": {"rotation": "1"}}
    )
    assert list(rotated.replaces) == ["keepers"]

    raw = plugin.create(BYTES, {"length": 32})
    made = values(raw.properties)
    assert len(base64.b64decode(made["base64"])) == 32
    assert base64.b64decode(made["base64"]).hex() == made["hex"]
    assert secrets(raw.properties) == {"base64", "hex"}
    imported = plugin.stub.Read(provider_pb2.ReadRequest(urn=plugin.urn(BYTES), id=made["base64"]))
    assert values(imported.properties)["hex"] == made["hex"]


def test_an_input_the_type_lacks_is_refused_by_check(
    tls_plugin: Plugin, random_plugin: Plugin
) -> None:
    for plugin, type_, required in (
        (tls_plugin, KEY, {"algorithm": "ECDSA"}),
        (random_plugin, PASSWORD, {"length": 3}),
    ):
        failures = plugin.check(type_, {**required, "colour": "blue"}).failures
        assert [(f.property, f.reason) for f in failures] == [
            ("colour", f"colour is not an input of {type_}")
        ]
    missing = tls_plugin.check(KEY, {}).failures
    assert [(f.property, f.reason) for f in missing] == [
        ("algorithm", "Missing required argument algorithm")
    ]


def test_every_bridged_package_is_served_by_a_stand_in() -> None:
    # The program registers every resource with the real engine: no package is answered in
    # its process any more (issue 40 item 2).
    from e2e.engine import BRIDGED_PACKAGES
    from e2e.providers import PACKAGES

    assert frozenset(PACKAGES) == BRIDGED_PACKAGES == {"tls", "random", "postgresql", "keycloak"}

"""The rendered output checked against real schemas, with the reference files the repository
holds (``reference/``, their sources and licence in ``reference/SOURCES.md``):

- **manifests**: built-in kinds against the strict schemas ``kubernetes-validate`` bundles for
  a Kubernetes version (unknown fields refused); custom resources against the JSON Schema of
  their CRD (``reference/crds/<group>/<kind>_<version>.json``), after the CRD's defaults are
  applied as the API server applies them, with the keys of ``x-kubernetes-list-type: map``
  lists unique; a kind with no schema fails. Then what the API server checks outside the
  OpenAPI schema and a render can get wrong: object names (DNS-1123 label, DNS-1035 label or
  subdomain by kind), label and annotation keys and label values, a workload's selector among
  its template's labels, named ports on a Service with several, a Route's host in lower case.
- **plan**: each non-Kubernetes resource of ``plan.json`` (tls, postgresql, random, keycloak
  and their providers) against its provider's Pulumi package schema
  (``reference/pulumi/<package>.json``) turned into a JSON Schema: unknown and missing
  required inputs, value types, nested object types. A type the package does not define fails;
  other packages (kubernetes, components) are skipped and counted.

Not checked: the CRDs' CEL rules (``x-kubernetes-validations``), admission webhooks, anything
that needs a live API server or provider.

Runnable by hand (exit 0 when every document passes, 1 otherwise; the last line counts)::

    .venv/bin/python -m tests.schema_checks manifests -k 1.31 build/rendered/aws/manifests
    .venv/bin/python -m tests.schema_checks plan build/rendered/aws/plan.json
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from jsonschema.exceptions import ValidationError

REFERENCE = Path(__file__).resolve().parent.parent / "reference"
CRDS = REFERENCE / "crds"
PROVIDERS = REFERENCE / "pulumi"

# --- the shared result -------------------------------------------------------------------------


@dataclass
class Report:
    """Problems by document (``FILE:INDEX kind/name`` or ``TYPE NAME``) and the counts."""

    problems: list[tuple[str, str]]
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def add(self, label: str, problems: list[str] | None) -> None:
        if problems is None:
            self.skipped += 1
        elif problems:
            self.failed += 1
            self.problems += [(label, p) for p in problems]
        else:
            self.passed += 1

    def lines(self) -> list[str]:
        summary = f"{self.passed} passed, {self.failed} failed"
        if self.skipped:
            summary += f", {self.skipped} skipped"
        return [f"{label}: {problem}" for label, problem in self.problems] + [summary]


def where(error: ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(root)"


# --- manifests ---------------------------------------------------------------------------------


def unique_list_map_keys(
    validator: Any, keys: list[str], instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """``x-kubernetes-list-map-keys``: two items with the same keys are refused by the API
    server (server-side apply cannot merge them)."""
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(instance, list):
        return
    first: dict[str, int] = {}
    for index, item in enumerate(instance):
        if isinstance(item, dict):
            key = json.dumps([item.get(k) for k in keys])
            if key in first:
                yield ValidationError(
                    f"items {first[key]} and {index} have the same list-map keys {keys}: {key}"
                )
            first.setdefault(key, index)


CrdValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"x-kubernetes-list-map-keys": unique_list_map_keys}
)


def with_defaults(schema: dict[str, Any], value: Any) -> Any:
    """``value`` as the API server validates a custom resource: a null where the schema does
    not allow one dropped, a missing property with a ``default`` given it, at every depth."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        out = {}
        for key, item in value.items():
            sub = properties.get(key, schema.get("additionalProperties"))
            if item is None and isinstance(sub, dict) and not allows_null(sub):
                continue
            out[key] = with_defaults(sub, item) if isinstance(sub, dict) else item
        for key, sub in properties.items():
            if key not in out and "default" in sub:
                out[key] = with_defaults(sub, copy.deepcopy(sub["default"]))
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [with_defaults(schema["items"], item) for item in value]
    return value


def allows_null(schema: dict[str, Any]) -> bool:
    declared = schema.get("type")
    return declared is None or declared == "null" or "null" in (declared or [])


class Schemas:
    """The schema of each apiVersion and kind, found once."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.crds: dict[Path, Any] = {}

    def crd(self, api_version: str, kind: str) -> Any:
        group, _, version = api_version.rpartition("/")
        if not re.fullmatch(r"[a-z0-9.-]*", group) or not re.fullmatch(r"\w+", kind + version):
            return None
        path = CRDS / group / f"{kind.lower()}_{version}.json"
        if path not in self.crds:
            self.crds[path] = (
                CrdValidator(json.loads(path.read_text(encoding="utf-8")))
                if path.is_file()
                else None
            )
        return self.crds[path]

    def problems(self, document: dict[str, Any]) -> list[str]:
        api_version, kind = document.get("apiVersion", ""), document.get("kind", "")
        crd = self.crd(str(api_version), str(kind))
        if crd is not None:
            found = crd.iter_errors(with_defaults(crd.schema, document))
            schema = [f"{where(e)}: {e.message}" for e in sorted(found, key=where)]
        else:
            try:
                kubernetes_validate.validate(document, self.version, strict=True)
                schema = []
            except kubernetes_validate.SchemaNotFoundError:
                return [
                    f"no schema for {api_version} {kind}: not a built-in kind of Kubernetes"
                    f" {self.version} and no CRD schema under {CRDS.relative_to(REFERENCE.parent)}"
                ]
            except kubernetes_validate.ValidationError as error:
                schema = [f"{where(error)}: {error.message}"]
        return schema + api_server_problems(document)


DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
SUBDOMAIN = re.compile(rf"{DNS_LABEL.pattern}(\.{DNS_LABEL.pattern})*")
QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
PATH_SEGMENT = re.compile(r"(?!\.\.?$)[^/%]+")
"""Any other kind's name (RBAC's, a Route's...): not '.' or '..', no '/' or '%'."""
SUBDOMAIN_NAMED = {"ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim", "Job"}
SUBDOMAIN_NAMED |= {"Deployment", "StatefulSet", "DaemonSet", "CronJob", "NetworkPolicy"}
SUBDOMAIN_NAMED |= {"Ingress", "PodDisruptionBudget"}
WORKLOADS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}


def key_problem(key: str) -> str | None:
    """A label or annotation key: an optional DNS subdomain prefix, '/', a qualified name."""
    prefix, slash, name = key.rpartition("/")
    if slash and (len(prefix) > 253 or not SUBDOMAIN.fullmatch(prefix)):
        return f"prefix {prefix!r} is not a DNS-1123 subdomain"
    if len(name) > 63 or not QUALIFIED.fullmatch(name):
        return f"name {name!r} is not a qualified name (at most 63 characters)"
    return None


def metadata_problems(metadata: Any, at: str, kind: str | None) -> list[str]:
    if not isinstance(metadata, dict):
        return []
    found = []
    name = metadata.get("name")
    if kind is not None:
        pattern, longest = {"Namespace": (DNS_LABEL, 63), "Service": (DNS_1035, 63)}.get(
            kind, (SUBDOMAIN, 253) if kind in SUBDOMAIN_NAMED else (PATH_SEGMENT, 253)
        )
        if not isinstance(name, str) or len(name) > longest or not pattern.fullmatch(name):
            found.append(f"{at}.name: {name!r} is not a valid {kind} name")
    namespace = metadata.get("namespace")
    if namespace is not None and not (
        isinstance(namespace, str) and len(namespace) <= 63 and DNS_LABEL.fullmatch(namespace)
    ):
        found.append(f"{at}.namespace: {namespace!r} is not a DNS-1123 label")
    for field in ("labels", "annotations"):
        for key, value in (metadata.get(field) or {}).items():
            if (problem := key_problem(str(key))) is not None:
                found.append(f"{at}.{field}: key {key!r}: {problem}")
            if field == "labels" and not (
                isinstance(value, str) and len(value) <= 63 and QUALIFIED.fullmatch(value or "a")
            ):
                found.append(f"{at}.labels: value {value!r} of {key!r} is not a label value")
    return found


def api_server_problems(document: dict[str, Any]) -> list[str]:
    """What the API server refuses that the OpenAPI schemas do not say."""
    kind = str(document.get("kind", ""))
    found = metadata_problems(document.get("metadata"), "metadata", kind)
    spec = document.get("spec") if isinstance(document.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    template = spec.get("template")
    if kind in WORKLOADS | {"Job"} and isinstance(template, dict):
        found += metadata_problems(template.get("metadata"), "spec.template.metadata", None)
    if kind in WORKLOADS and isinstance(template, dict):
        labels = (template.get("metadata") or {}).get("labels") or {}
        wanted = (spec.get("selector") or {}).get("matchLabels") or {}
        found += [
            f"spec.selector.matchLabels: {k}={v} is not a label of spec.template"
            for k, v in wanted.items()
            if labels.get(k) != v
        ]
    if kind == "Service" and len(ports := spec.get("ports") or []) > 1:
        names = [p.get("name") for p in ports]
        found += [
            f"spec.ports.{i}.name: required with several ports"
            for i, n in enumerate(names)
            if not n
        ]
        found += [
            f"spec.ports: name {n!r} repeated" for n in set(names) if n and names.count(n) > 1
        ]
    host = spec.get("host") if kind == "Route" else None
    if host is not None and not (isinstance(host, str) and SUBDOMAIN.fullmatch(host)):
        found.append(f"spec.host: {host!r} is not a lower-case DNS subdomain (OpenShift)")
    return found


def manifest_files(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.suffix in {".yaml", ".yml", ".json"})
        else:
            yield path


def check_manifests(paths: Iterable[Path], version: str) -> Report:
    """Every document of ``paths`` (files, or directories searched for YAML and JSON)."""
    schemas, report = Schemas(version), Report([])
    for path in manifest_files(paths):
        documents = yaml.safe_load_all(path.read_text(encoding="utf-8"))
        for index, document in enumerate(documents):
            if document is None:
                continue
            if not isinstance(document, dict):
                report.add(f"{path}:{index}", ["not a mapping"])
                continue
            name = (document.get("metadata") or {}).get("name")
            label = f"{path}:{index} {document.get('kind')}/{name}"
            report.add(label, schemas.problems(document))
    return report


# --- plan.json -------------------------------------------------------------------------------

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
"""What the engine sends for a value not known yet."""
SECRET_KEY = "4dabf18193072939515e22adb298388d"
"""The key of the wire form of a secret (or an output, a resource, an asset)."""
REDACTED = "[secret]"
"""What ``plan.json`` holds in place of a secret value (``gatewayctl.inputs.secrets``)."""
ANY_VALUE = {"anyOf": [{"type": "null"}, {"enum": [UNKNOWN, REDACTED]}]}
ANY_VALUE["anyOf"].append({"type": "object", "required": [SECRET_KEY]})
ENGINE_RESERVED = {"version": {"type": "string"}, "pluginDownloadURL": {"type": "string"}}


def as_json_schema(spec: dict[str, Any]) -> dict[str, Any]:
    """A Pulumi property spec as JSON Schema; an unknown or secret value passes any type."""
    return {"anyOf": [{"$ref": "#/$defs/special"}, value_schema(spec)]}


def value_schema(spec: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in spec:
        ref = str(spec["$ref"])
        return {"$ref": f"#/$defs/{escape(ref[8:])}"} if ref.startswith("#/types/") else {}
    if "oneOf" in spec:
        return {"anyOf": [as_json_schema(s) for s in spec["oneOf"]]}
    declared = spec.get("type")
    if declared == "array":
        return {"type": "array", "items": as_json_schema(spec.get("items") or {})}
    if declared == "object" and "properties" in spec:
        return closed(spec["properties"], spec.get("required", []))
    if declared == "object":
        return {
            "type": "object",
            "additionalProperties": as_json_schema(spec.get("additionalProperties") or {}),
        }
    return {"type": declared} if declared else {}


def closed(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: as_json_schema(v) for k, v in properties.items()},
        "required": required,
        "additionalProperties": False,
    }


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def type_schema(definition: dict[str, Any]) -> dict[str, Any]:
    if "enum" in definition:
        return {"enum": [e.get("value") for e in definition["enum"]]}
    if definition.get("type", "object") == "object":
        return closed(definition.get("properties", {}), definition.get("required", []))
    return {"type": definition["type"]}


class Package:
    """A provider's Pulumi package schema: one JSON Schema validator per resource type."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.defs = {t: type_schema(d) for t, d in schema.get("types", {}).items()}
        self.defs["special"] = ANY_VALUE
        self.aliases = {
            alias["type"]: token
            for token, resource in schema["resources"].items()
            for alias in resource.get("aliases") or []
            if isinstance(alias, dict) and "type" in alias
        }
        self.validators: dict[str, Any] = {}

    def validator(self, token: str) -> Any:
        """The validator of a resource type's inputs (``provider``: the provider's), or None
        when the package does not define it."""
        if token not in self.validators:
            if token == "provider":
                spec = self.schema.get("provider", {})
                properties = {**ENGINE_RESERVED, **spec.get("inputProperties", {})}
            elif (spec := self.schema["resources"].get(self.aliases.get(token, token))) is None:
                return None
            else:
                properties = spec.get("inputProperties", {})
            schema = closed(properties, spec.get("requiredInputs", []))
            self.validators[token] = jsonschema.Draft202012Validator({**schema, "$defs": self.defs})
        return self.validators[token]


def provider_inputs(inputs: dict[str, Any], properties: dict[str, Any]) -> dict[str, Any]:
    """The Python SDKs send a provider's inputs that are not strings JSON-encoded ("5432")."""
    decoded = {}
    for key, value in inputs.items():
        spec = properties.get(key, {})
        if isinstance(value, str) and spec.get("type") != "string" and value != REDACTED:
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        decoded[key] = value
    return decoded


def check_plan(plan: dict[str, Any], directory: Path = PROVIDERS) -> Report:
    packages = {}
    for path in sorted(directory.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        packages[schema["name"]] = Package(schema)
    report = Report([])
    for resource in plan["resources"]:
        kind = str(resource.get("type", ""))
        label = f"{kind} {resource.get('name')}"
        inputs = resource.get("inputs") or {}
        if kind.startswith("pulumi:providers:"):
            package, token = packages.get(kind.rsplit(":", 1)[-1]), "provider"
            if package is not None:
                properties = package.schema.get("provider", {}).get("inputProperties", {})
                inputs = provider_inputs(inputs, properties)
        else:
            package, token = packages.get(kind.split(":", 1)[0]), kind
        if package is None:
            report.add(label, None)
            continue
        validator = package.validator(token)
        if validator is None:
            report.add(
                label,
                [
                    f"type: not a resource of {package.schema['name']}"
                    f" {package.schema.get('version')}"
                ],
            )
            continue
        errors = sorted(validator.iter_errors(inputs), key=where)
        report.add(label, [f"inputs.{where(e)}: {e.message}" for e in errors])
    return report


# --- by hand ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.schema_checks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    manifests = commands.add_parser("manifests", help="rendered manifests (files or directories)")
    manifests.add_argument("-k", "--kubernetes", default="1.31", help="Kubernetes version")
    manifests.add_argument("paths", nargs="+", type=Path)
    plan = commands.add_parser("plan", help="a rendered plan.json")
    plan.add_argument("plan", type=Path)
    args = parser.parse_args(argv)
    if args.command == "manifests":
        report = check_manifests(args.paths, args.kubernetes)
    else:
        report = check_plan(json.loads(args.plan.read_text(encoding="utf-8")))
    print("\n".join(report.lines()))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())

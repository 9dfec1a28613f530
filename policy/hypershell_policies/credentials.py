"""No password, key or credential-bearing URI in a ConfigMap or an environment value literal.

Both are readable by anyone who can read the object (and end up in logs, dashboards and
``kubectl describe``); credentials belong in Secrets, referenced with ``valueFrom``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from ._props import containers, describe, elements, get, kind_of, pod_spec

# Any PEM private key block: PKCS#8, encrypted, RSA, EC, DSA, OpenSSH.
_PEM_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
# scheme://user:password@ (the user may be empty, as in redis://:password@host).
_CREDENTIAL_URI = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://[^\s/?#@:]*:[^\s/?#@]+@")
_SECRET_WORDS = ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "KEY")


def secret_like_name(name: str) -> bool:
    """True when the name's last word ends in a secret word: DB_PASSWORD, PGPASSWORD, API_KEY,
    GITHUB_TOKEN, CLIENT_SECRET; false for TOKEN_TTL, KEY_FILE or KEYCLOAK_URL."""
    words = [w for w in re.split(r"[^A-Z0-9]+", name.upper()) if w]
    return bool(words) and words[-1].endswith(_SECRET_WORDS)


def content_problems(text: str) -> Iterator[str]:
    """What in ``text`` is a credential; the credential itself is never repeated."""
    if _PEM_PRIVATE_KEY.search(text):
        yield "contains a PEM private key block"
    for match in _CREDENTIAL_URI.finditer(text):
        yield f"contains a {match.group(1)}:// URI with embedded credentials"


def _mounted(value: str, container: Mapping[str, Any]) -> bool:
    """``value`` is a file under one of the container's mounts: it names where a credential is
    mounted (the console dashboard's ``GATEWAY_CLIENT_KEY``), it is not the credential."""
    mounts = [get(m, "mountPath") for m in elements(get(container, "volumeMounts"))]
    return any(
        isinstance(m, str) and m.startswith("/") and value.startswith(m.rstrip("/") + "/")
        for m in mounts
    ) and ".." not in value.split("/")


def _env_problems(path: str, spec: Mapping[str, Any]) -> Iterator[str]:
    for container_path, container_name, container in containers(path, spec):
        for index, env in enumerate(elements(get(container, "env"))):
            value = get(env, "value")
            if not isinstance(value, str) or not value:
                continue
            name = str(get(env, "name"))
            where = f"{container_path} ({container_name}): env[{index}] ({name}): value"
            for problem in content_problems(value):
                yield f"{where} {problem}; use valueFrom.secretKeyRef"
            # A boolean is a switch (OAUTH2_PROXY_PASS_ACCESS_TOKEN), a mounted path a place.
            flag = value in ("true", "false")
            if secret_like_name(name) and not flag and not _mounted(value, container):
                yield f"{where} is a literal for a secret-like name; use valueFrom.secretKeyRef"


def _config_map_problems(props: Mapping[str, Any]) -> Iterator[str]:
    data = get(props, "data")
    for key in data if isinstance(data, Mapping) else ():
        value = data[key]
        if isinstance(value, str):
            for problem in content_problems(value):
                yield f"data[{key!r}] {problem}; keep it in a Secret"


def validate_credentials(args: ResourceValidationArgs, report: ReportViolation) -> None:
    problems: Iterator[str] = iter(())
    if kind_of(args.resource_type) == ("core", "ConfigMap"):
        problems = _config_map_problems(args.props)
    elif (found := pod_spec(args.resource_type, args.props)) is not None:
        problems = _env_problems(*found)
    what = describe(args.resource_type, args.props, args.name)
    for problem in problems:
        report(f"{what}: {problem}", None)


no_plaintext_credentials = ResourceValidationPolicy(
    name="no-plaintext-credentials",
    description=(
        "No password, private key or credential-bearing URI in a ConfigMap or in a container"
        " environment value literal; use a Secret."
    ),
    validate=validate_credentials,
)

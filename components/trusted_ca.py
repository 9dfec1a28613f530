"""The trusted CA bundle of a tenant (upstream §1.3, "Trusted CA"): a private issuer's CA.

ConfigMap ``gateway-trusted-ca`` (key ``ca-bundle.crt``) in the tenant namespace, mounted into
the gateway container with ``subPath`` at ``/etc/pki/tls/certs/hypershell-ca-bundle.crt`` (the
path upstream's code uses; its spec's ``ca-bundle.crt`` would shadow the image's own bundle),
and ``SSL_CERT_FILE`` pointing at it so the gateway's TLS client (the issuer's JWKS) trusts it.
The bundle is part of the pod-template hash, so a new bundle rolls the pod.
"""

from __future__ import annotations

import copy
from typing import Any

import pulumi

CONFIG_MAP = "gateway-trusted-ca"
KEY = "ca-bundle.crt"
MOUNT_PATH = "/etc/pki/tls/certs/hypershell-ca-bundle.crt"
VOLUME = "trusted-ca"
ENV = "SSL_CERT_FILE"


def with_trusted_ca(spec: dict[str, Any], config_map: pulumi.Input[str]) -> dict[str, Any]:
    """A copy of a Deployment spec whose gateway container mounts the bundle and points
    ``SSL_CERT_FILE`` at it (the first container is the gateway's)."""
    result = copy.copy(spec)
    template = result["template"] = copy.copy(spec["template"])
    pod = template["spec"] = copy.copy(spec["template"]["spec"])
    container = copy.copy(pod["containers"][0])
    container["env"] = [*container.get("env", []), {"name": ENV, "value": MOUNT_PATH}]
    container["volumeMounts"] = [
        *container.get("volumeMounts", []),
        {"name": VOLUME, "mountPath": MOUNT_PATH, "subPath": KEY, "readOnly": True},
    ]
    pod["containers"] = [container, *pod["containers"][1:]]
    pod["volumes"] = [*pod.get("volumes", []), {"name": VOLUME, "configMap": {"name": config_map}}]
    return result

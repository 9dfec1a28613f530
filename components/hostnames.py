"""The one hostname function (docs/upstream-differences.md, "1. One hostname function").

Upstream has two derivations that disagree (the GRPCRoute path skips the hijack guard). Here
a single function decides a gateway's external host; SANs, Route, GRPCRoute and the
published address all use its result.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse

from components.naming import DNS1123_LABEL_MAX, DNS1123_SUBDOMAIN_MAX, host_label

_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
# The WHATWG URL standard ("ends in a number") and inet_aton read a name whose last label is
# decimal or 0x-hexadecimal as an IPv4 address (`127.1`, `0x7f.1`); no top-level domain is
# numeric (RFC 3696 §2), so such a name can only be an address.
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")


class HostnameError(ValueError):
    """A host or base domain that cannot be used; the message is for people."""


def check_dns_name(value: str, *, what: str = "host") -> str:
    """Return ``value`` if it is a lowercase RFC 1123 DNS name, else raise HostnameError.

    Every label 1-63 characters of ``[a-z0-9-]`` not starting or ending with ``-``; at most
    253 characters in all. ``fullmatch`` per label, so a trailing newline never passes.
    """
    if not value:
        raise HostnameError(f"{what} must not be empty")
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        raise HostnameError(
            f"{what} {value!r} is {len(value)} characters; at most {DNS1123_SUBDOMAIN_MAX}"
        )
    for label in value.split("."):
        if len(label) > DNS1123_LABEL_MAX:
            raise HostnameError(
                f"{what} {value!r}: label {label!r} is {len(label)} characters;"
                f" at most {DNS1123_LABEL_MAX}"
            )
        if _LABEL.fullmatch(label) is None:
            raise HostnameError(
                f"{what} {value!r} is not a lowercase RFC 1123 DNS name"
                " (labels of a-z, 0-9 and inner '-', separated by single dots)"
            )
    return value


def check_host(value: str, *, what: str = "host") -> str:
    """Return ``value`` if clients can reach it by name over TLS, else raise HostnameError.

    A lowercase RFC 1123 DNS name (``check_dns_name``) that is no IP address (certificates,
    Routes and GRPCRoutes name hosts; an address would be read as one, not resolved) and is
    fully qualified: a single label (``sandboxes``, ``localhost``) depends on each client's
    search domains, and a wildcard certificate ``*.<label>`` for a base domain is refused by
    TLS clients. Database hosts are not held to this: an address or ``localhost`` is fine there.
    """
    check_dns_name(value, what=what)
    try:
        ipaddress.ip_address(value)
    except ValueError:
        pass
    else:
        raise HostnameError(f"{what} {value!r} is an IP address; it must be a DNS name")
    last = value.rsplit(".", 1)[-1]
    if _NUMERIC_LABEL.fullmatch(last):
        raise HostnameError(
            f"{what} {value!r} ends in the numeric label {last!r}, so it is read as an IP"
            " address; it must be a DNS name (no top-level domain is numeric)"
        )
    if "." not in value:
        raise HostnameError(
            f"{what} {value!r} is a single label; it must be a fully qualified DNS name such as"
            f" {value}.example.com"
        )
    return value


def tenant_slot(namespace: str, base_domain: str) -> str:
    """The host a tenant owns under the base domain: ``gw-<namespace>.<baseDomain>``."""
    return f"{host_label(namespace)}.{base_domain}"


def gateway_hostname(*, namespace: str, base_domain: str | None, explicit: str | None) -> str:
    """The external host of a gateway whose exposure is enabled.

    - explicit host outside the base domain: used as is (vanity host);
    - explicit host under the base domain: must be the tenant's own slot (hijack guard);
    - no explicit host: the tenant's slot, which needs a base domain.

    Hosts and base domains are fully qualified DNS names, never IP addresses (``check_host``).
    """
    if base_domain is not None:
        check_host(base_domain, what="base domain")
    if explicit is not None:
        host = check_host(explicit)
        if base_domain is not None and (host == base_domain or host.endswith("." + base_domain)):
            slot = tenant_slot(namespace, base_domain)
            if host != slot:
                raise HostnameError(
                    f"host {host!r} is under the base domain {base_domain!r} but is not this"
                    f" gateway's own slot {slot!r}; a tenant may only use its own slot there"
                )
        return host
    if base_domain is None:
        raise HostnameError(
            "exposure is enabled but there is no host: set spec.exposure.host or the"
            " cluster's baseDomain"
        )
    return check_dns_name(tenant_slot(namespace, base_domain))


def grpcs_address(host: str) -> str:
    """The address clients dial: ``grpcs://<host>:443``."""
    return f"grpcs://{host}:443"


DEFAULT_PORTS = {"http": 80, "https": 443}
"""The port a URL of each scheme means when it names none (RFC 9110 §4.2)."""


def endpoint(url: str) -> str:
    """``url`` in the one form every uniqueness rule compares endpoints in: the scheme and host
    in lowercase, the host without the trailing dot of an absolute name, the scheme's default
    port dropped, the path without trailing slashes; no user info, query or fragment. Two
    spellings of one server (``https://SSO.example.com:443/`` and ``https://sso.example.com``)
    are one endpoint, so a rule keyed by it cannot be passed by writing the URL another way."""
    parts = urllib.parse.urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").removesuffix(".")
    try:
        port = parts.port
    except ValueError:  # a port that is no number: kept as written, it names no other server
        port = None
        host = parts.netloc.rpartition("@")[2].lower().removesuffix(".")
    shown = f"[{host}]" if ":" in host else host  # an IPv6 address
    if port is not None and port != DEFAULT_PORTS.get(scheme):
        shown += f":{port}"
    return f"{scheme}://{shown}{parts.path.rstrip('/')}"

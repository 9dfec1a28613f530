"""Stand-in ``pulumi-resource-random``: values really random, kept until replaced.

Follows hashicorp/terraform-provider-random (bridged by pulumi-random 4.21.4),
``internal/provider/``:

- ``resource_password.go``: ``Create`` draws the password (``internal/random/string.go``
  ``CreateString``: ``min_*`` characters of each enabled class first, the rest from every
  enabled class, shuffled with ``crypto/rand``; the special set ``!@#$%&*()-_=+[]{}<>:?``
  unless ``override_special``), ``bcrypt_hash`` with bcrypt's default cost, the id ``none``;
  defaults ``lower``, ``upper``, ``numeric``, ``number``, ``special`` true and ``min_*`` 0;
  ``ImportState`` takes the password as the id. Read does nothing.
- ``resource_bytes.go``: ``length`` bytes from ``crypto/rand``, as ``base64`` and ``hex``, the
  id ``none``; ``ImportState`` takes the base64 text as the id.
- Every input forces a new value (``RequiresReplace``; ``keepers`` too), so nothing is ever
  updated and the value lives until a replacement: ``gatewayctl.diff.rules.forces_new``.
"""

from __future__ import annotations

import base64
import secrets

import bcrypt

from e2e.providers.base import Kind, ProviderError, Values, run

LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()
NUMERIC = "0123456789"
SPECIAL = "!@#$%&*()-_=+[]{}<>:?"
BCRYPT_COST = 10  # golang.org/x/crypto/bcrypt DefaultCost, what generateHash uses


def draw(inputs: Values) -> str:
    """``CreateString``: the minimums first, then any enabled class; shuffled."""
    classes = [
        (inputs.get("lower", True), LOWER, int(inputs.get("minLower") or 0)),
        (inputs.get("upper", True), UPPER, int(inputs.get("minUpper") or 0)),
        (inputs.get("numeric", True), NUMERIC, int(inputs.get("minNumeric") or 0)),
        (
            inputs.get("special", True),
            inputs.get("overrideSpecial") or SPECIAL,
            int(inputs.get("minSpecial") or 0),
        ),
    ]
    length = int(inputs["length"])
    chosen: list[str] = []
    pool = ""
    for enabled, chars, minimum in classes:
        if enabled:
            pool += chars
            chosen += [secrets.choice(chars) for _ in range(minimum)]
    if not pool:
        raise ProviderError("no character class is enabled")
    chosen += [secrets.choice(pool) for _ in range(max(0, length - len(chosen)))]
    for i in range(len(chosen) - 1, 0, -1):
        j = secrets.randbelow(i + 1)
        chosen[i], chosen[j] = chosen[j], chosen[i]
    return "".join(chosen)


class RandomPassword(Kind):
    def create(self, inputs: Values) -> tuple[str, Values]:
        result = draw(inputs)
        hashed = bcrypt.hashpw(result.encode(), bcrypt.gensalt(BCRYPT_COST)).decode()
        return "none", {**inputs, "result": result, "bcryptHash": hashed}

    def read(self, id_: str, state: Values) -> Values | None:
        if state:
            return state
        # `pulumi import`: the id is the password (ImportState).
        hashed = bcrypt.hashpw(id_.encode(), bcrypt.gensalt(BCRYPT_COST)).decode()
        return {**dict(self.defaults), "length": len(id_), "result": id_, "bcryptHash": hashed}


class RandomBytes(Kind):
    def create(self, inputs: Values) -> tuple[str, Values]:
        data = secrets.token_bytes(int(inputs["length"]))
        return "none", {**inputs, "base64": base64.b64encode(data).decode(), "hex": data.hex()}

    def read(self, id_: str, state: Values) -> Values | None:
        if state:
            return state
        data = base64.b64decode(id_)  # `pulumi import`: the id is the base64 text
        return {"length": len(data), "base64": id_, "hex": data.hex()}


KINDS: tuple[Kind, ...] = (
    RandomPassword(
        "random:index/randomPassword:RandomPassword",
        inputs=frozenset(
            {
                "keepers",
                "length",
                "lower",
                "minLower",
                "minNumeric",
                "minSpecial",
                "minUpper",
                "number",
                "numeric",
                "overrideSpecial",
                "special",
                "upper",
            }
        ),
        required=frozenset({"length"}),
        defaults={
            "lower": True,
            "upper": True,
            "numeric": True,
            "number": True,
            "special": True,
            "minLower": 0,
            "minUpper": 0,
            "minNumeric": 0,
            "minSpecial": 0,
        },
        outputs=("bcryptHash", "result"),
        secret_outputs=frozenset({"bcryptHash", "result"}),
    ),
    RandomBytes(
        "random:index/randomBytes:RandomBytes",
        inputs=frozenset({"keepers", "length"}),
        required=frozenset({"length"}),
        outputs=("base64", "hex"),
        secret_outputs=frozenset({"base64", "hex"}),
    ),
)


def main() -> None:
    from e2e.providers import plugin_version

    run("random", plugin_version("random"), KINDS)

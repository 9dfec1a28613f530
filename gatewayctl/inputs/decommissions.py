"""Decommission records: what a pull request that removes a gateway says about its data
(``deploy/decommissions.yaml``, issue 45 item 2; docs/decommissioning.md).

Removing a gateway whose database is retained (``deletionPolicy: Retain``) while its key is the
default driver's KEK Secret deletes the only copy of that key with the namespace: the
credentials encrypted into the retained database can never be read again. ``gatewayctl diff``
refuses that removal unless this file, in the same pull request, records one of two things
for the gateway, keyed ``<stack>/<gateway>``::

    gateways:
      ibm/team-a:
        kek: exported                    # the key was exported before the removal ...
        exportedTo: vault kv secret/backups/openshell-team-a (OPS-1234)   # ... and kept there
        by: alice                        # optional
        date: 2026-12-06                 # optional
      local/dev:
        data: discard                    # the credentials in the database may go

The file is the project's, not a stack's: the entries of every stack sit in it, and the git
history of the file is the history of the decisions. ``validate`` reads it too, and refuses an
entry whose gateway is still declared (a record is for a removal: left in place, it would let a
later removal of a gateway of the same name through unasked).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components import naming
from gatewayctl.errors import InvalidInputError, Problem, printable
from gatewayctl.inputs.stackfile import unknown_keys
from gatewayctl.inputs.yamlfile import read_yaml_mapping

SETTINGS = "deploy/decommissions.yaml"
TOP_KEYS = ("gateways",)
ENTRY_KEYS = ("kek", "exportedTo", "data", "by", "date")
TEXT_MAX = 200
"""Characters of ``exportedTo`` and ``by``: a path, a ticket, a name."""
CHOICE = "expected `kek: exported` (with exportedTo) or `data: discard`, one of them"


@dataclass(frozen=True, kw_only=True)
class Record:
    """One gateway's record: the key exported (``exported_to`` says where) or the data given
    up (``discard``)."""

    stack: str
    gateway: str
    exported_to: str | None = None
    discard: bool = False
    by: str = ""
    date: str = ""

    @property
    def key(self) -> str:
        return f"{self.stack}/{self.gateway}"


def read(root: Path) -> dict[str, Record]:
    """Every record by ``<stack>/<gateway>`` (none without the file); InvalidInputError naming
    the file and field of every problem."""
    path = root / SETTINGS
    if not path.exists() and not path.is_symlink():
        return {}
    document = read_yaml_mapping(path, SETTINGS)
    problems = [
        Problem(SETTINGS, str(k), "unknown key; the file holds 'gateways'", at_key=True)
        for k in document
        if k not in TOP_KEYS
    ]
    entries = document.get("gateways")
    if not isinstance(entries, dict):
        problems.append(
            Problem(SETTINGS, "gateways", "expected a mapping of <stack>/<gateway> to its record")
        )
        raise InvalidInputError(problems)
    found = {}
    for key, entry in entries.items():
        record = _record(key, entry, problems)
        if record is not None:
            found[record.key] = record
    if problems:
        raise InvalidInputError(problems)
    return found


def _split(key: Any) -> tuple[str, str] | None:
    if not isinstance(key, str) or key.count("/") != 1:
        return None
    stack, gateway = key.split("/")
    if not (naming.is_dns1123_label(stack) and naming.is_dns1123_label(gateway)):
        return None
    return stack, gateway


def _text(entry: Mapping[str, Any], name: str, field: str, problems: list[Problem]) -> str:
    value = entry.get(name, "")
    if not isinstance(value, str) or len(value) > TEXT_MAX:
        problems.append(
            Problem(SETTINGS, f"{field}.{name}", f"expected text of at most {TEXT_MAX} characters")
        )
        return ""
    return printable(value.strip())


def _date(entry: Mapping[str, Any], field: str, problems: list[Problem]) -> str:
    value = entry.get("date")
    if value is None:
        return ""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    problems.append(Problem(SETTINGS, f"{field}.date", "expected a date, YYYY-MM-DD"))
    return ""


def _record(key: Any, entry: Any, problems: list[Problem]) -> Record | None:
    field = f"gateways.{key}"
    names = _split(key)
    if names is None:
        message = "is no <stack>/<gateway> (two DNS-1123 labels: ibm/team-a)"
        problems.append(Problem(SETTINGS, field, message, at_key=True))
    if not isinstance(entry, dict):
        problems.append(Problem(SETTINGS, field, f"{CHOICE}, as a mapping"))
        return None
    before = len(problems)
    problems += unknown_keys(SETTINGS, entry, field, ENTRY_KEYS)
    kek, data = entry.get("kek"), entry.get("data")
    if (kek is None) == (data is None):
        problems.append(Problem(SETTINGS, field, CHOICE))
    if kek is not None and kek != "exported":
        problems.append(Problem(SETTINGS, f"{field}.kek", "expected exported"))
    if data is not None and data != "discard":
        problems.append(Problem(SETTINGS, f"{field}.data", "expected discard"))
    exported_to = _text(entry, "exportedTo", field, problems)
    if kek == "exported" and not exported_to and isinstance(entry.get("exportedTo", ""), str):
        message = "required with `kek: exported`: where the copy is kept (a Vault path, a ticket)"
        problems.append(Problem(SETTINGS, f"{field}.exportedTo", message))
    if kek is None and data is not None and "exportedTo" in entry:
        problems.append(
            Problem(SETTINGS, f"{field}.exportedTo", "only with `kek: exported`", at_key=True)
        )
    by = _text(entry, "by", field, problems)
    date = _date(entry, field, problems)
    if len(problems) > before or names is None:
        return None
    return Record(
        stack=names[0],
        gateway=names[1],
        exported_to=exported_to if kek is not None else None,
        discard=data is not None,
        by=by,
        date=date,
    )


def declared_problems(
    records: Mapping[str, Record], declared: Mapping[str, Iterable[str]]
) -> list[Problem]:
    """A problem per record whose gateway ``declared`` (stack -> its gateways) still holds."""
    problems = []
    for key, record in sorted(records.items()):
        if record.gateway in set(declared.get(record.stack, ())):
            message = (
                f"gateway {record.gateway} is declared in stack {record.stack}: a record is for"
                " its removal; delete the entry, or the declaration"
            )
            problems.append(Problem(SETTINGS, f"gateways.{key}", message, at_key=True))
    return problems

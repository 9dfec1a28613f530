"""A component's settings from a declaration's model, the one way: each field of the settings
dataclass read from the model's attribute of the same name (or the one it is renamed from), a
nested model as the plain data of its fields. The resolution builds the credential driver's,
the issuer's and the workload's settings this way, so a setting passes from the declaration to
the component without a line of its own in between.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def from_fields(cls: type[T], source: object, **renamed: str) -> T:
    """``cls`` (a dataclass) with each field ``source`` has; ``renamed`` maps a field to the
    attribute it is read from. A field ``source`` lacks keeps its default."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        attribute = renamed.get(field.name, field.name)
        if not field.init or not hasattr(source, attribute):
            continue
        value = getattr(source, attribute)
        dump = getattr(value, "model_dump", None)
        values[field.name] = dump(by_alias=True) if callable(dump) else value
    return cls(**values)

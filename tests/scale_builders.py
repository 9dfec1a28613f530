"""Large stacks for the scale tests (issue 23): many copies of the richest committed sample.

``gateways/ibm/research.yaml`` is the richest declaration of the samples: an explicit host,
two replicas, the Vault credential driver, ``access`` to two groups and a user, and the web
console. Its copies keep every one of those and share the principals (each copy names the
same groups and user, as tenants of one company do), with a host, a Vault role and a name of
their own.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.builders import copy_stack, declarations_dir
from tests.support import ROOT

STACK = "ibm"
SAMPLE = ROOT / declarations_dir(STACK) / "research.yaml"


def research_copy(index: int) -> str:
    """The text of copy ``index`` of the research declaration."""
    document = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    name = f"research-{index:04d}"
    document["metadata"]["name"] = name
    spec = document["spec"]
    spec["exposure"]["host"] = f"openshell.{name}.example.org"
    spec["credentials"]["vault"]["role"] = f"openshell-{name}"
    spec["credentials"]["vault"]["mount"] = f"tenants/{name}"  # each its own (validate)
    return yaml.safe_dump(document, sort_keys=False)


def research_stack(root: Path, gateways: int) -> Path:
    """The ibm stack with ``gateways`` copies of ``research.yaml`` as its only declarations."""
    copy_stack(STACK, root)
    directory = root / declarations_dir(STACK)
    for path in directory.glob("*.yaml"):
        path.unlink()
    for index in range(1, gateways + 1):
        (directory / f"research-{index:04d}.yaml").write_text(
            research_copy(index), encoding="utf-8"
        )
    return root

"""``gatewayctl schema`` and ``gatewayctl explain``: the declaration file's JSON Schema (or its
field reference) and one field of it, from the models that validate it
(``gatewayctl.inputs.schema``); with ``--stack-file``, the same of a stack's settings
(``gatewayctl.inputs.stackschema``).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from gatewayctl import lazy
from gatewayctl.cli.exits import EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl.cli import arguments

SCHEMA_EPILOG = """\
exit codes: 0 ok; 1 any other error.

examples:
  gatewayctl schema > schemas/gateway.schema.json
  gatewayctl schema --markdown > docs/reference.md
  gatewayctl schema --stack-file > schemas/stack.schema.json
  gatewayctl schema --stack-file --markdown > docs/stack-reference.md
"""


EXPLAIN_EPILOG = """\
exit codes: 0 ok; 2 no such field (with the closest known paths); 1 any other error.

examples:
  gatewayctl explain spec.credentials.vault
  gatewayctl explain spec.deletionPolicy
"""


def add(commands: arguments.Commands) -> None:
    """``schema``, then ``explain``."""
    sch = commands.add_parser(
        "schema",
        help="print the JSON Schema of a declaration file (schemas/gateway.schema.json)",
        description="Print the JSON Schema (draft 2020-12) of a gateway declaration file,"
        " generated from the models that validate it, with a description for every field."
        " The committed schemas/gateway.schema.json is this output; every sample declaration"
        " names it in a first-line `# yaml-language-server: $schema=...` comment, so editors"
        " with the YAML language server complete and check the fields. With --stack-file, the"
        " same of a stack's settings: the keys of Pulumi.<stack>.yaml in the project's"
        " namespace (schemas/stack.schema.json, docs/stack-reference.md).",
        epilog=SCHEMA_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sch.add_argument(
        "--markdown",
        action="store_true",
        help="print the field reference instead (docs/reference.md): one table per object of"
        " the schema, with each field's type, default and description",
    )
    sch.add_argument(
        "--stack-file",
        action="store_true",
        help="describe a stack's settings instead of a declaration: the keys of"
        " Pulumi.<stack>.yaml under hypershell-gateways: (schemas/stack.schema.json; with"
        " --markdown, the key reference docs/stack-reference.md)",
    )
    sch.set_defaults(func=cmd_schema, reads_project=False)
    exp = commands.add_parser(
        "explain",
        help="describe one field of a declaration file: type, default, its fields",
        description="Print one field of a gateway declaration file, as `kubectl explain`"
        " does: its description, type, default and, for an object, its own fields. Read from"
        " the same schema as `schema`.",
        epilog=EXPLAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    exp.add_argument(
        "field", metavar="FIELD", help="dotted path of the field, as in the YAML (spec.replicas)"
    )
    exp.set_defaults(func=cmd_explain, reads_project=False)


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    """The declaration file's JSON Schema on stdout (``schemas/gateway.schema.json``), or its
    reference; with ``--stack-file``, those of a stack's settings."""
    if args.stack_file:
        settings = lazy.stackschema.stack_schema()
        if args.markdown:
            text = lazy.stackschema.markdown(settings)
        else:
            text = lazy.stackschema.schema_text()
        sys.stdout.write(text)
        return EXIT_OK
    if args.markdown:
        sys.stdout.write(lazy.reference.markdown(lazy.schema.declaration_schema()))
    else:
        sys.stdout.write(lazy.schema.schema_text())
    return EXIT_OK


def cmd_explain(args: argparse.Namespace, console: Console) -> int:
    """One field of the declaration file, from the same schema."""

    sys.stdout.write(lazy.schema.explain(args.field))  # raw: rich would read `[x]` as markup
    return EXIT_OK

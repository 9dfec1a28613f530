"""``python -m gatewayctl``: validate, render and diff stacks offline.

Exit codes: 0 ok; 2 invalid input (each problem as ``path:line:column: field: problem``, nothing
written); 1 anything else; 130 interrupted. ``diff`` exits 3 when the stack's render changes.
``status`` exits 3 out of sync, 4 degraded, 5 certificates due for renewal (``STATUS_EPILOG``).
``main`` is the one place an error becomes an exit code (the kinds: ``gatewayctl.errors``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatewayctl import ROOT, interrupts
from gatewayctl.errors import InvalidInputError, Problem, ToolError, UsageError, printable, safe

if TYPE_CHECKING:
    from rich.console import Console

    from gatewayctl import printing
    from gatewayctl.engine import parallel
    from gatewayctl.resolve import preparation

# Start-up (issue 23): each command imports what it needs when it runs, so ``--help``,
# ``validate``, ``stacks``, ``status``, ``promote`` and ``driver`` load no provider SDK; only
# the commands that run the program (render, diff, import-file) import ``gatewayctl.engine.render``.

DEFAULT_OUT = Path("build/rendered")
SIGN_IN_SHOWN = {
    "keycloak": "keycloak",
    "oidc": "own issuer",
    "none": "none (declared)",
    "unset": "NOT CONFIGURED",
}
"""The summary's sign-in column: whether, and how, people sign in to each gateway."""
PROGRESS_MIN_GATEWAYS = 25
EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_CHANGES = 0, 1, 2, 3
EXIT_DEGRADED, EXIT_RENEWAL = 4, 5  # `status` only (STATUS_EPILOG)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it (SIGTERM: 143: gatewayctl.interrupts)
DEBUG_ENV = "GATEWAYCTL_DEBUG"
GITHUB_ACTIONS_ENV = "GITHUB_ACTIONS"
"""``true`` in a GitHub Actions job: problems are also printed as annotations (``::error``)."""
DEBUG_HINT = f"unexpected: run with --debug or {DEBUG_ENV}=1 for the traceback"
DEBUG_HELP = (
    f"on an error that exits 1, print its traceback (for a bug report) instead of one line;"
    f" also {DEBUG_ENV}=1"
)

EPILOG = """\
exit codes: 0 ok; 2 invalid input (every problem listed as `path:line:column: field: problem`,
nothing written; also as GitHub annotations when GITHUB_ACTIONS=true); 1 any other error (its
traceback with --debug or GATEWAYCTL_DEBUG=1, for a bug report).

examples:
  python -m gatewayctl validate aws          # config and declarations only; fast, for PR checks
  python -m gatewayctl validate aws --deploy # also ready for `pulumi up`: CA bundles, real secrets
  python -m gatewayctl render ibm            # → build/rendered/ibm/{manifests/,plan.json}
  python -m gatewayctl render --all          # every Pulumi.<stack>.yaml
  python -m gatewayctl diff aws --base origin/main   # Markdown report of what a PR changes
  python -m gatewayctl promote openshell-0.0.110 --to aws   # bind a release (releases/)
  python -m gatewayctl status ibm --from refresh.json state.json  # sync/health per gateway
"""

DIFF_EPILOG = """\
exit codes: 0 no changes; 3 changes; 2 invalid input (the working tree's problems listed as
`path: field: problem`, or an unknown --base ref); 1 any other error (git, the base render).

The base ref is checked out into a temporary git worktree and rendered by its own program
(`python -m gatewayctl render`, same interpreter); a ref without the stack or without an offline
render is an empty side. Needs no Pulumi CLI, backend, cluster or credentials. The working tree
renders while the base does; the base's render is kept in build/diff-cache/ (checked before
each use, never holding a secret), so the next diff against the same base renders only the
working tree.

examples:
  python -m gatewayctl diff local --base main
  python -m gatewayctl diff --all --base origin/main --output build/diff.md
  python -m gatewayctl diff local --base main --no-limit --output build/diff-full.md
"""


IMPORT_EPILOG = """\
exit codes: 0 ok (also when no declaration adopts a namespace: nothing is written); 2 invalid
input (every problem listed as `path: field: problem`); 1 any other error.

examples:
  python -m gatewayctl import-file ibm       # → build/import/ibm.json, and the commands to run
  python -m gatewayctl import-file ibm --out /tmp/ibm-import.json
"""

OPERATOR_EPILOG = """\
exit codes: 0 ok; 2 invalid input (the settings file, the CLI version file, or a stack the
operator owns that is not valid or not ready to deploy as `validate --deploy` checks; every
problem listed as `path: field: problem`, nothing written); 1 any other error.

examples:
  python -m gatewayctl operator-manifests    # → build/operator/stack-<stack>.yaml
  python -m gatewayctl operator-manifests --out /tmp/operator
"""


DEPLOY_HELP = (
    "also check what `pulumi up` needs and the offline render does not: every"
    " database.sslRootCert is a PEM bundle in the project, no `secure:` value is a placeholder"
    " (see docs/running.md), each cluster has its clusterSecrets entry"
)

DRIVER_EPILOG = """\
exit codes: 0 ok; 2 invalid input (an unknown stack, or deploy/operator.yaml: every problem
listed as `path: field: problem`); 1 any other error.

examples:
  python -m gatewayctl driver ibm aws              # ibm: ci / aws: operator
  python -m gatewayctl driver --list ci ibm aws    # ["ibm"]: the stacks the workflows deploy
"""


STATUS_EPILOG = """\
exit codes: 0 synced and healthy, no certificate due; 3 out of sync (a resource differs from
the state, or its live object is missing: drift, or a change git has not deployed); 4 degraded
(a gateway Degraded or Progressing; before 3); 5 certificates inside their renewal window
(otherwise synced and healthy); 2 invalid input (a file that is empty, truncated, nested too
deeply or not one of the CLI's JSON documents, a file of another stack or project, a
certificate whose expiry cannot be read, every problem as `path: field: problem`; selfHeal on
a stack the operator owns; an unknown GATEWAY); 1 any other error. With a GATEWAY, the
codes are that gateway's alone.

Each FILE is told by its shape: `pulumi refresh --preview-only --json` (drift, and the live
state for health), `pulumi preview --json` (what git would change), `pulumi stack export`
(the state: certificates, health when no refresh is given, and the state's age). The gateways
are those the files mention and those the stack declares (Missing when not in the state).
Property values are never shown, only their paths. The table goes to stdout, notes (counts,
the state's age, what differs) to stderr; colour only on a terminal, never with NO_COLOR.

examples:
  pulumi refresh --preview-only --json > refresh.json && pulumi stack export > state.json
  python -m gatewayctl status ibm --from refresh.json --from state.json
  python -m gatewayctl status ibm -o wide --from refresh.json state.json
  python -m gatewayctl status ibm team-a --from refresh.json state.json   # its resource tree
  python -m gatewayctl status ibm --from refresh.json state.json --format markdown
"""


def _stacks(args: argparse.Namespace, root: Path) -> list[str]:
    from gatewayctl.inputs import stackfile

    if args.all == bool(args.stack):
        raise UsageError("name one STACK or pass --all")
    return stackfile.requested_stacks(root, None if args.all else args.stack)


def _prepare_all(root: Path, stacks: Sequence[str], jobs: int = 1) -> list[preparation.Prepared]:
    from gatewayctl.resolve import inventory, preparation

    validated: list[parallel.Validated]
    if jobs > 1 and len(stacks) > 1:  # in workers (gatewayctl.engine.parallel)
        from gatewayctl.engine import parallel

        validated = parallel.prepare_stacks(root, stacks, jobs=jobs)
    else:
        validated = []
        for stack in stacks:
            try:
                validated.append(preparation.prepare(root, stack))
            except InvalidInputError as error:
                validated.append(error)
    problems = [
        p for item in validated if isinstance(item, InvalidInputError) for p in item.problems
    ]
    prepared = [item for item in validated if not isinstance(item, InvalidInputError)]
    problems += inventory.coverage_problems(root, stacks)
    if problems:
        raise InvalidInputError(problems)
    return prepared


def _summary(
    console: Console, rendered: parallel.StackRender, out: Path | None, *, wide: bool
) -> None:
    """One stack's summary: its name, one row per gateway (never folded; ``wide`` adds the
    long columns: address, console, release), and the totals."""
    from gatewayctl import printing
    from gatewayctl.resolve import releases

    header = ["NAME", "CLUSTER", "MODE", "SIGN-IN", "OVERRIDES", "RESOURCES"]
    if wide:
        header += ["ADDRESS", "CONSOLE", "RELEASE"]
    rows = []
    for gw in rendered.gateways:
        release, overrides = releases.summary_cells(
            gw.release, gw.release_pinned, gw.image_overrides
        )
        row = [
            gw.name,
            gw.cluster,
            gw.mode,
            SIGN_IN_SHOWN.get(gw.sign_in, gw.sign_in),
            overrides,
            str(gw.resources),
        ]
        if wide:
            row += [gw.address or "-", gw.console or "-", release]
        rows.append(row)
    where = f" → {out}" if out is not None else ""
    printing.show(
        console,
        [
            f"stack {rendered.prepared.loaded.name}",
            *printing.columns(header, rows),
            f"{len(rendered.gateways)} gateways, {rendered.resources} resources,"
            f" {rendered.manifests} manifests{where}",
        ],
    )


def _render_document(
    rendered: Sequence[tuple[parallel.StackRender, Path]],
    notes: Sequence[str],
    removed: Sequence[Path],
) -> dict[str, Any]:
    """``render -o json|yaml``: per stack where it was written, its totals and its gateways
    (as the table's cells, by plan.json's names); the notes; the outputs of removed stacks."""
    return {
        "stacks": [
            {
                "stack": item.prepared.loaded.name,
                "out": str(out),
                "resources": item.resources,
                "manifests": item.manifests,
                "gateways": [
                    {
                        "name": gw.name,
                        "cluster": gw.cluster,
                        "mode": gw.mode,
                        "address": gw.address,
                        "console": gw.console,
                        "signIn": gw.sign_in,
                        "release": gw.release,
                        "releasePinned": gw.release_pinned,
                        "imageOverrides": list(gw.image_overrides),
                        "resources": gw.resources,
                    }
                    for gw in item.gateways
                ],
            }
            for item, out in rendered
        ],
        "notes": list(notes),
        "removed": [str(path) for path in removed],
    }


def _render_all(
    prepared: Sequence[preparation.Prepared], console: Console, show_progress: bool, jobs: int
) -> list[parallel.StackRender]:
    from gatewayctl.cli.progress import RenderProgress
    from gatewayctl.engine import parallel

    if not show_progress:
        return parallel.render_stacks(prepared, jobs=jobs)
    progress = RenderProgress(console, prepared, PROGRESS_MIN_GATEWAYS)
    with interrupts.on_interrupt(progress.stop):  # the terminal gets its cursor back
        try:
            return parallel.render_stacks(prepared, jobs=jobs, reporter=progress)
        finally:
            progress.stop()


def _jobs(args: argparse.Namespace, stacks: int) -> int:
    """``--jobs``, or as many workers as there are cores and stacks."""
    from gatewayctl.engine import parallel

    jobs = getattr(args, "jobs", None)
    return parallel.default_jobs(stacks) if jobs is None else min(jobs, max(stacks, 1))


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.engine import outputs, parallel

    root = args.root
    stacks = _stacks(args, root)
    # Not capped by the stacks: one large stack's gateways are split over the workers, and
    # gatewayctl.engine.shares decides from the work how many run (small work stays in this
    # process).
    jobs = args.jobs if args.jobs is not None else parallel.available_cores()
    prepared = _prepare_all(root, stacks, jobs)
    base = args.out if args.out is not None else root / DEFAULT_OUT
    outs = {
        p.loaded.name: base / p.loaded.name if args.all or args.out is None else base
        for p in prepared
    }
    _check_outputs(root, outs.values())
    # The notes once the input is known to be usable: a run that exits 2 prints its problems.
    notes = printing.Notes(args.quiet)
    if placeholders := sum(p.secure_placeholders for p in prepared):
        notes(
            f"{placeholders} `secure:` config values cannot be decrypted offline; rendered"
            " with placeholders (redacted in the output like every secret)"
        )
    _warn(notes, root, prepared)
    rendered = _render_all(prepared, notes.console, not args.quiet, jobs)
    written = []
    for item in rendered:
        out = outs[item.prepared.loaded.name]
        outputs.write_tree(out, item.files)
        written.append((item, out))
    removed = list(outputs.remove_stale_outputs(base, keep=outs.keys())) if args.all else []
    for gone in removed:
        notes.line(f"removed {gone} (no such stack any more)")
    if printing.is_document(args):
        printing.print_document(_render_document(written, notes.shown, removed), args.format)
    elif not args.quiet:
        for item, out in written:
            _summary(console, item, out, wide=args.format == "wide")
    return EXIT_OK


def _check_outputs(root: Path, outs: Iterable[Path]) -> None:
    """Every output directory is checked before anything is rendered or written."""
    from gatewayctl.engine import outputs

    problems = [problem for out in outs for problem in outputs.directory_problems(out, root)]
    if problems:
        raise InvalidInputError(problems)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _warn(notes: printing.Notes, root: Path, prepared: Sequence[preparation.Prepared]) -> None:
    """Notes on what the offline run does not need but ``pulumi up`` does, or should not see."""
    from gatewayctl.resolve.preparation import absent_ca_bundles

    shown: set[str] = set()  # the releases are the project's: one note for all its stacks
    for item in prepared:
        for warning in [
            *item.plaintext_notes,
            *absent_ca_bundles(root, item.loaded),
            *item.release_notes,
        ]:
            if warning not in shown:
                shown.add(warning)
                notes(warning)


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.resolve import identity, readiness
    from gatewayctl.resolve import stack as resolve

    names = _stacks(args, args.root)
    jobs = _jobs(args, len(names))

    def prepare_all(root: Path, stacks: Sequence[str]) -> list[preparation.Prepared]:
        try:
            return _prepare_all(root, stacks, jobs)
        except InvalidInputError as error:
            # Every problem at once: validate's own rules too, not only once the others are fixed.
            own = [p for stack in stacks for p in resolve.validate_rules(root, stack)]
            raise InvalidInputError([*error.problems, *own]) from None

    if args.deploy:
        stacks = readiness.check(args.root, names, prepare_all)
    else:
        stacks = prepare_all(args.root, names)
    if problems := [p for s in stacks for p in identity.validate_rules(s.loaded)]:
        raise InvalidInputError(problems)
    notes = printing.Notes(args.quiet)  # once valid: a run that exits 2 prints its problems
    _warn(notes, args.root, stacks)
    if printing.is_document(args):
        document = {
            "deploy": args.deploy,
            "notes": notes.shown,
            "stacks": [
                {
                    "stack": item.loaded.name,
                    "config": str(item.loaded.config_path),
                    "gateways": sorted(g.name for g in item.loaded.gateways),
                    "clusters": sorted(item.loaded.config.clusters),
                }
                for item in stacks
            ],
        }
        printing.print_document(document, args.format)
        return EXIT_OK
    for prepared in stacks:
        loaded = prepared.loaded
        console.print(
            f"{loaded.config_path}: ok ({_count(len(loaded.gateways), 'gateway')},"
            f" {_count(len(loaded.config.clusters), 'cluster')})",
            markup=False,
            soft_wrap=True,
        )
    return EXIT_OK


def cmd_import_file(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.deploy import adoption
    from gatewayctl.engine import outputs, render
    from gatewayctl.inputs import stackfile

    (prepared,) = _prepare_all(args.root, stackfile.requested_stacks(args.root, args.stack))
    out = args.out or args.root / "build" / "import" / f"{args.stack}.json"
    if problems := outputs.file_problems(
        out, args.root, ours=adoption.is_import_file, kind="an import file"
    ):
        raise InvalidInputError(problems)
    document = adoption.import_file(render.execute(prepared))
    imported = sum(1 for r in document["resources"] if "id" in r)
    commands: list[str] = []
    if document["resources"]:
        outputs.write_file(out, json.dumps(document, indent=2) + "\n")
        targets = adoption.targets(document)
        # The program declares them already; code generated from URN-keyed entries would
        # not bind.
        commands = [
            "pulumi up " + " ".join(f"--target '{urn}'" for urn in targets),
            f"pulumi import --file {out} --protect=false --generate-code=false",
        ]
    if printing.is_document(args):
        written = bool(document["resources"])
        made = {
            "stack": args.stack,
            "file": str(out) if written else None,
            "resources": imported,
            "targets": adoption.targets(document) if written else [],
            "commands": commands,
        }
        printing.print_document(made, args.format)
    elif not commands:
        console.print(
            f"stack {args.stack}: no declaration adopts an existing namespace (spec.namespace);"
            " nothing written",
            markup=False,
            soft_wrap=True,
        )
    else:
        console.print(f"{imported} resources to import → {out}", markup=False, soft_wrap=True)
        console.print("create the parents and providers it refers to first, then import:")
        for command in commands:
            console.print(f"  {command}", markup=False, soft_wrap=True)
    return EXIT_OK


def cmd_operator_manifests(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl.deploy import operator
    from gatewayctl.engine import outputs

    files = operator.operator_manifests(args.root, _prepare_all)
    out = args.out or args.root / "build" / "operator"
    _check_outputs(args.root, [out])
    outputs.write_tree(out, files)
    for name in sorted(files):
        console.print(f"{out / name}", markup=False, soft_wrap=True)
    return EXIT_OK


def _list(items: Sequence[str], format: str) -> None:
    """A list for a workflow matrix: JSON on one line (``$GITHUB_OUTPUT`` takes one), or
    YAML."""
    from gatewayctl import printing

    if format == "yaml":
        printing.print_document(list(items), format)
    else:
        printing.write(json.dumps(list(items), separators=(",", ":")) + "\n")


def cmd_driver(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.inputs import operator_settings, stackfile
    from gatewayctl.inputs.stackfile import stack_file

    known = stackfile.all_stacks(args.root)
    unknown = [
        Problem(stack_file(stack), "", f"no such stack; the stacks here are {', '.join(known)}")
        for stack in args.stacks
        if stack not in known
    ]
    if unknown:
        raise InvalidInputError(unknown)
    drivers = operator_settings.drivers(args.root, args.stacks)
    if args.list is not None:
        listed = [stack for stack in drivers if drivers[stack] == args.list]
        _list(listed, args.format)
    elif printing.is_document(args):
        printing.print_document({"drivers": drivers}, args.format)
    else:
        for stack, driver in drivers.items():
            console.print(f"{stack}: {driver}", markup=False, soft_wrap=True)
    return EXIT_OK


PROMOTE_EPILOG = """\
exit codes: 0 ok (also when the target already runs the release: nothing is written); 2 invalid
input (an unknown release, stack or cluster, or a stack that would not validate with the new
binding: every problem listed as `path: field: problem`, nothing written); 1 any other error.

examples:
  python -m gatewayctl promote openshell-0.0.110 --to local
  python -m gatewayctl promote openshell-0.0.110 --to aws/rosa-us-east-1
  python -m gatewayctl promote openshell-0.0.110 --to aws --dry-run
"""


def cmd_promote(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.deploy import promote

    promotion = promote.promote(args.root, args.release, args.to)
    if not args.dry_run:
        promote.write(args.root, promotion)
    if printing.is_document(args):
        printing.print_document(promote.document(promotion, dry_run=args.dry_run), args.format)
        return EXIT_OK
    for line in promote.report(promotion):
        console.print(line, markup=False, soft_wrap=True)
    if args.dry_run and promotion.changed:
        console.print(f"dry run: {promotion.path} not written", markup=False, soft_wrap=True)
    return EXIT_OK


def cmd_stacks(args: argparse.Namespace, console: Console) -> int:
    """Every stack here, as a JSON list (a workflow matrix: one job per stack)."""
    from gatewayctl.inputs import stackfile

    _list(stackfile.requested_stacks(args.root, None), args.format)
    return EXIT_OK


def cmd_diff(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl import printing
    from gatewayctl.diff import cache as diff_cache
    from gatewayctl.diff import command as diff
    from gatewayctl.diff import steps
    from gatewayctl.diff.report import is_report
    from gatewayctl.engine import outputs

    root = args.root
    prepared = _prepare_all(root, _stacks(args, root))
    # Every output path before anything is rendered: the report, and the base renders' cache.
    problems = diff_cache.problems(root)
    if args.output is not None:
        problems += outputs.file_problems(
            args.output, root, ours=is_report, kind="a diff report", flag="--output"
        )
    if args.json is not None:
        problems += outputs.file_problems(
            args.json, root, ours=steps.is_document, kind="a diff steps file", flag="--json"
        )
    if problems:
        raise InvalidInputError(problems)
    limit = 0 if args.no_limit else None
    result = diff.run(root, prepared, args.base, every_stack=args.all, limit=limit)
    if printing.is_document(args):
        from gatewayctl.diff import summary as diff_summary

        printing.print_document(diff_summary.document(result, args.base), args.format)
    else:
        printing.write(result.report)  # raw: rich would read `[secret]` as markup
    if args.output is not None:
        outputs.write_file(args.output, result.report)
    if args.json is not None:
        text = json.dumps(steps.document(result.diffs), indent=2, sort_keys=True) + "\n"
        outputs.write_file(args.json, text)
    return EXIT_CHANGES if result.changed else EXIT_OK


SCHEMA_EPILOG = """\
exit codes: 0 ok; 1 any other error.

examples:
  python -m gatewayctl schema > schemas/gateway.schema.json
  python -m gatewayctl schema --markdown > docs/reference.md
"""

COMPLETION_EPILOG = """\
exit codes: 0 ok; 2 another shell; 1 any other error.

examples:
  echo 'source <(gatewayctl completion bash)' >> ~/.bashrc
  echo 'source <(gatewayctl completion zsh)' >> ~/.zshrc
"""

EXPLAIN_EPILOG = """\
exit codes: 0 ok; 2 no such field (with the closest known paths); 1 any other error.

examples:
  python -m gatewayctl explain spec.credentials.vault
  python -m gatewayctl explain spec.deletionPolicy
"""


def cmd_status(args: argparse.Namespace, console: Console) -> int:
    from gatewayctl.status import command

    return {
        "degraded": EXIT_DEGRADED,
        "out-of-sync": EXIT_CHANGES,
        "renewal-due": EXIT_RENEWAL,
        "synced": EXIT_OK,
    }[command.run(args, console)]


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    """The declaration file's JSON Schema on stdout (``schemas/gateway.schema.json``)."""
    from gatewayctl.inputs import schema

    if args.markdown:
        from gatewayctl.inputs import reference

        sys.stdout.write(reference.markdown(schema.declaration_schema()))
    else:
        sys.stdout.write(schema.schema_text())
    return EXIT_OK


def cmd_explain(args: argparse.Namespace, console: Console) -> int:
    """One field of the declaration file, from the same schema."""
    from gatewayctl.inputs import schema

    sys.stdout.write(schema.explain(args.field))  # raw: rich would read `[x]` as markup
    return EXIT_OK


def cmd_completion(args: argparse.Namespace, console: Console) -> int:
    """The shell's completion script on stdout, generated from this parser."""
    from gatewayctl.cli import completion

    sys.stdout.write(completion.script(args.shell, parser()))
    return EXIT_OK


GRAPH_EPILOG = """\
exit codes: 0 ok; 2 invalid input (the problems `validate` reports, every one listed as
`path: field: problem`, or an output file the tool may not write; nothing written); 1 any
other error.

examples:
  python -m gatewayctl graph --all                       # Mermaid, for a Markdown page
  python -m gatewayctl graph aws ibm --format dot -o build/gateways.dot
  python -m gatewayctl graph --all --format dot | dot -Tsvg > gateways.svg
"""


def cmd_graph(args: argparse.Namespace, console: Console) -> int:
    """Stacks, clusters, gateways and what they share, as a Mermaid or DOT graph."""
    from gatewayctl.cli import graph
    from gatewayctl.engine import outputs

    if args.all == bool(args.stacks):
        raise UsageError("name one or more STACKs or pass --all")
    names = graph.requested(args.root, args.stacks)
    jobs = _jobs(args, len(names))
    stacks = graph.validated(args.root, names, lambda root, s: _prepare_all(root, s, jobs))
    if args.output is not None and (
        problems := outputs.file_problems(
            args.output, args.root, ours=graph.is_graph, kind="a graph", flag="--output"
        )
    ):
        raise InvalidInputError(problems)
    text = graph.formatted(graph.build(stacks), args.format)
    if args.output is None:
        sys.stdout.write(text)  # raw: rich would read `[` as markup
    else:
        outputs.write_file(args.output, text)
        console.print(f"{args.output}", markup=False, soft_wrap=True)
    return EXIT_OK


def _utc(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an ISO 8601 time") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 1")
    return value


def _jobs_argument(command: argparse.ArgumentParser, verb: str) -> None:
    command.add_argument(
        "--jobs",
        "-j",
        type=_positive,
        metavar="N",
        help=f"{verb} at most N stacks at once, each in a worker process of its own (default:"
        " as many as there are cores and stacks); 1: one after the other in this process"
        + (
            "; a stack of many gateways is split over the workers, as many as its size"
            " needs (small stacks render in this process)"
            if verb == "render"
            else ""
        ),
    )


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose description may be written when its help is shown
    (``describe``): a command's help names constants of modules that the other commands, and
    ``--help``, need not import."""

    def __init__(
        self, *args: Any, describe: Callable[[], str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._describe = describe

    def format_help(self) -> str:
        if self._describe is not None:
            self.description, self._describe = self._describe(), None
        return super().format_help()


def _diff_description() -> str:
    from gatewayctl.diff.report import REPORT_LIMIT

    return (
        "Render the stack at --base (from a temporary git worktree, with that"
        " ref's own program) and in this working tree, and print a Markdown report: the risks"
        " first (what is destroyed, replaced, flipped to Delete, granted, adopted, not"
        " committed), a summary (gateways, Kubernetes objects per kind, other resources),"
        " then per-object unified diffs in collapsible sections, at most"
        f" {REPORT_LIMIT:,} characters (--no-limit: all of them). Secrets never appear."
    )


def _operator_description() -> str:
    from gatewayctl.inputs import operator_settings

    return (
        f"Write one pulumi.com/v1 Stack per stack the operator owns in"
        f" {operator_settings.SETTINGS} (git source, refresh, resync, Secret references, the"
        f" workspace image pinned to {operator_settings.PULUMI_VERSION_FILE}), so each stack"
        " runs in its own workspace pod, and the workspaces' ServiceAccount with its"
        " system:auth-delegator binding. Each owned stack must pass `validate --deploy` first."
        " The output directory is replaced whole."
    )


def _driver_description() -> str:
    from gatewayctl.inputs import operator_settings

    return (
        f"Print who runs `pulumi up`, refresh and drift correction for each STACK:"
        f" `operator` for the stacks {operator_settings.SETTINGS} gives the operator, `ci` for the"
        " others (all of them without that file). The workflows skip the operator's stacks."
    )


DISTRIBUTION = "hypershell-gateways"
"""The project's name in pyproject.toml: ``--version`` prints its version."""


def version() -> str:
    """The installed project's version (``[project] version``; ``uv sync`` installs it)."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # modules run from a checkout nothing installed
        raise ToolError(f"{DISTRIBUTION} is not installed here; run `make setup`") from None


class _Version(argparse.Action):
    """``--version``: the version is looked up only when asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        sys.stdout.write(f"gatewayctl {version()}\n")
        parser.exit()


QUIET_HELP = "no notes on stderr, only the result"


def parser() -> argparse.ArgumentParser:
    from gatewayctl import printing

    top = _Parser(
        prog="python -m gatewayctl",
        description="Validate and render HyperShell gateway stacks offline, with no Pulumi CLI,"
        " backend, cluster or credentials.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument(
        "--root", type=Path, default=ROOT, help="project root (default: this checkout)"
    )
    top.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    top.add_argument("--version", action=_Version, help="print the project's version and exit")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rend = commands.add_parser(
        "render",
        help="run the program offline and write manifests and plan.json",
        description="Run the real program under Pulumi's mock runtime and write one YAML file"
        " per Kubernetes object (manifests/<cluster>/<namespace>/<kind>-<name>.yaml) and"
        " plan.json (every resource with its inputs; secrets redacted). The output directory"
        " is replaced whole.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rend.add_argument("stack", nargs="?", help="stack name, as in Pulumi.<stack>.yaml")
    rend.add_argument("--all", action="store_true", help="render every Pulumi.*.yaml stack")
    rend.add_argument(
        "--out",
        type=Path,
        help="output directory (default build/rendered/<stack>; with --all, DIR/<stack>)",
    )
    printing.format_option(
        rend,
        ["table", "wide", "json", "yaml"],
        help="the summary: table (default: one row per gateway), wide (also address, console"
        " and release), json or yaml (every stack, gateway and note;"
        " docs/render.md, 'Output formats')",
    )
    rend.add_argument(
        "-q", "--quiet", action="store_true", help="no table, progress or notes (errors only)"
    )
    _jobs_argument(rend, "render")
    rend.set_defaults(func=cmd_render)

    val = commands.add_parser(
        "validate",
        help="check config and declarations only (fast; for pre-commit and PR checks)",
        description="Validate Pulumi.<stack>.yaml and its declarations; nothing is written.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    val.add_argument("stack", nargs="?", help="stack name, as in Pulumi.<stack>.yaml")
    val.add_argument("--all", action="store_true", help="validate every Pulumi.*.yaml stack")
    val.add_argument("--deploy", action="store_true", help=DEPLOY_HELP)
    printing.format_option(
        val,
        ["text", "json", "yaml"],
        help="text (default: one line per stack), json or yaml (each stack's gateways and"
        " clusters, and the notes)",
    )
    val.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    _jobs_argument(val, "validate")
    val.set_defaults(func=cmd_validate)

    dif = commands.add_parser(
        "diff",
        help="Markdown report of what changes against a git ref (for PR comments)",
        describe=_diff_description,
        epilog=DIFF_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dif.add_argument("stack", nargs="?", help="stack name, as in Pulumi.<stack>.yaml")
    dif.add_argument(
        "--all", action="store_true", help="diff every stack of the working tree or the base"
    )
    dif.add_argument(
        "--base", required=True, metavar="REF", help="git ref to compare against (origin/main)"
    )
    dif.add_argument("--output", type=Path, metavar="FILE", help="also write the report to FILE")
    dif.add_argument(
        "--no-limit",
        action="store_true",
        help="keep every object diff (the report is otherwise cut to fit a GitHub comment)",
    )
    dif.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write the predicted step of every resource (by URN) and the changed"
        " objects to FILE as JSON",
    )
    printing.format_option(
        dif,
        ["markdown", "json", "yaml"],
        short=False,  # --output names the report's file here
        help="what stdout gets: markdown (default: the report), json or yaml (the summary as"
        " data; --output still writes the Markdown)",
    )
    dif.set_defaults(func=cmd_diff)

    imp = commands.add_parser(
        "import-file",
        help="pulumi import file for gateways adopted from the upstream controller",
        description="Write a `pulumi import --file` file mapping every object the upstream"
        " controller created for the stack's adopted gateways (declarations with"
        " spec.namespace) and their PostgreSQL role and database to"
        " their existing IDs. See docs/adoption.md.",
        epilog=IMPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imp.add_argument("stack", help="stack name, as in Pulumi.<stack>.yaml")
    imp.add_argument("--out", type=Path, metavar="FILE", help="default build/import/<stack>.json")
    printing.format_option(
        imp,
        ["text", "json", "yaml"],
        help="text (default: the file and the commands to run), json or yaml",
    )
    imp.set_defaults(func=cmd_import_file)

    opm = commands.add_parser(
        "operator-manifests",
        help="Pulumi Kubernetes Operator Stack objects, one per stack the operator owns",
        describe=_operator_description,
        epilog=OPERATOR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    opm.add_argument("--out", type=Path, metavar="DIR", help="default build/operator")
    opm.set_defaults(func=cmd_operator_manifests)

    pro = commands.add_parser(
        "promote",
        help="bind a release to a stack's clusters (or one cluster), keeping the file's layout",
        description="Set clusters.<cluster>.release to RELEASE in Pulumi.<stack>.yaml, for"
        " every cluster of the stack or the one named, editing only that value (comments and"
        " layout are kept), after checking that the stack validates with it; then print which"
        " gateways will roll (their images change) and which stay (a canary pinning its own"
        " release, overrides). Commit the change and open a pull request: its offline diff"
        " shows each gateway's release A → release B.",
        epilog=PROMOTE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pro.add_argument("release", help="release name, as in releases/<release>.yaml")
    pro.add_argument(
        "--to", required=True, metavar="STACK[/CLUSTER]", help="the stack, or one of its clusters"
    )
    pro.add_argument("--dry-run", action="store_true", help="check and report; write nothing")
    printing.format_option(
        pro,
        ["text", "json", "yaml"],
        help="text (default), json or yaml (each binding moved and each gateway's images)",
    )
    pro.set_defaults(func=cmd_promote)

    lst = commands.add_parser(
        "stacks",
        help="print every stack (Pulumi.<stack>.yaml) as a JSON list, for a workflow matrix",
        description="Print every stack of the project as a JSON list, sorted: the pull-request"
        " workflow runs one diff job per stack from it. Exit 2 when a stack file's name is no"
        " stack name or there is none.",
    )
    printing.format_option(lst, ["json", "yaml"], help="json (default: a list on one line) or yaml")
    lst.set_defaults(func=cmd_stacks)

    drv = commands.add_parser(
        "driver",
        help="who deploys each stack: the operator (deploy/operator.yaml stacks) or CI",
        describe=_driver_description,
        epilog=DRIVER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    drv.add_argument("stacks", nargs="+", metavar="STACK", help="stack name(s)")
    drv.add_argument(
        "--list",
        choices=["ci", "operator"],
        help="print only a JSON list of the STACKs with this driver (a workflow matrix)",
    )
    printing.format_option(
        drv,
        ["text", "json", "yaml"],
        help="text (default: `stack: driver` lines), json or yaml ({drivers: {stack: driver}});"
        " with --list, json (one line) or yaml",
    )
    drv.set_defaults(func=cmd_driver)
    sta = commands.add_parser(
        "status",
        help="per-gateway sync, health, certificates and address from the Pulumi CLI's JSON",
        description="Read what the Pulumi CLI writes (refresh/preview --json, stack export)"
        " and print, per gateway, like Argo CD: sync (Synced, OutOfSync with each changed"
        " resource and the property paths that differ, Missing), health (Healthy,"
        " Progressing, Degraded, Missing) from the live state, days until the earliest"
        " certificate expires (flagged inside its renewal window), and the address.",
        epilog=STATUS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sta.add_argument("stack", help="stack name, as in Pulumi.<stack>.yaml")
    sta.add_argument(
        "gateway",
        nargs="?",
        help="one gateway: its resources as a tree (kind, name, sync, health, message), and"
        " the exit code is its own (name it before --from, which takes every name after it)",
    )
    sta.add_argument(
        "--from",
        dest="sources",
        action="append",
        nargs="+",
        type=Path,
        required=True,
        metavar="FILE",
        help="a JSON file the CLI wrote; repeat, or give several",
    )
    printing.format_option(
        sta,
        ["table", "wide", "json", "yaml", "markdown"],
        help="table (default: one row per gateway), wide (also address, console and release),"
        " json or yaml (the whole status), markdown (the stack's report, for an issue)",
    )
    sta.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    sta.add_argument(
        "--now",
        type=_utc,
        metavar="TIME",
        help="ISO 8601 time to count certificate days from (default: now)",
    )
    sta.set_defaults(func=cmd_status)
    sch = commands.add_parser(
        "schema",
        help="print the JSON Schema of a declaration file (schemas/gateway.schema.json)",
        description="Print the JSON Schema (draft 2020-12) of a gateway declaration file,"
        " generated from the models that validate it, with a description for every field."
        " The committed schemas/gateway.schema.json is this output; every sample declaration"
        " names it in a first-line `# yaml-language-server: $schema=...` comment, so editors"
        " with the YAML language server complete and check the fields.",
        epilog=SCHEMA_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sch.add_argument(
        "--markdown",
        action="store_true",
        help="print the field reference instead (docs/reference.md): one table per object of"
        " the schema, with each field's type, default and description",
    )
    sch.set_defaults(func=cmd_schema)
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
    exp.set_defaults(func=cmd_explain)
    com = commands.add_parser(
        "completion",
        help="print a bash or zsh completion script for the gatewayctl command",
        description="Print the completion script of SHELL for the `gatewayctl` command (its"
        " commands and each command's options; file names as the shell completes them)."
        " Load it in the shell's start-up file.",
        epilog=COMPLETION_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    com.add_argument("shell", choices=["bash", "zsh"], metavar="SHELL", help="bash or zsh")
    com.set_defaults(func=cmd_completion)
    gra = commands.add_parser(
        "graph",
        help="draw stacks, clusters, gateways and the database servers, realms and base"
        " domains they share (Mermaid or DOT)",
        description="Write a graph of stacks → clusters → gateways, and of each cluster's"
        " database server, Keycloak realm and base domain (one node for what clusters share),"
        " read from the stack files and declarations and validated as `validate` does. Only"
        " names, hosts, realms and domains appear, never a secret; sorted, so the same input"
        " gives the same bytes.",
        epilog=GRAPH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gra.add_argument("stacks", nargs="*", metavar="STACK", help="stack name(s)")
    gra.add_argument("--all", action="store_true", help="every Pulumi.*.yaml stack")
    gra.add_argument(
        "--format", choices=["mermaid", "dot"], default="mermaid", help="default mermaid"
    )
    gra.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="FILE",
        help="write the graph to FILE (a new file, or a graph it wrote) instead of stdout",
    )
    gra.set_defaults(func=cmd_graph)
    for command in commands.choices.values():  # also after the command; unset, the top's stays
        command.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP
        )
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    # Full-width tables in logs and CI, where there is no terminal to measure.
    from rich.console import Console

    console = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 160)
    errors = Console(stderr=True, highlight=False, emoji=False)
    # The one place an error becomes an exit code (gatewayctl.errors: the kinds).
    try:
        # Every output of the command is kept, or none (an error or an interrupt undoes them).
        with interrupts.transaction():
            code: int = args.func(args, console)
    except InvalidInputError as error:
        from gatewayctl.inputs.locations import locate

        problems = locate(error.problems, args.root)
        if getattr(args, "format", None) in {"json", "yaml"}:  # gatewayctl.printing
            from gatewayctl import printing

            printing.print_document(printing.problems_document(problems), args.format)
        for problem in problems:
            errors.print(f"error: {problem}", markup=False, soft_wrap=True)
        errors.print(f"{len(problems)} problem(s); nothing written", markup=False)
        if os.environ.get(GITHUB_ACTIONS_ENV) == "true":
            _annotate(problems, args.root)
        return EXIT_INVALID
    except UsageError as error:
        errors.print(f"error: {safe(str(error))}", markup=False, soft_wrap=True)
        return EXIT_INVALID
    except KeyboardInterrupt:  # in process; `python -m gatewayctl` handles signals itself
        errors.print(interrupts.message(signal.SIGINT), markup=False)
        return EXIT_INTERRUPTED
    except Exception as error:  # a ToolError, or one the tool did not expect
        if args.debug or os.environ.get(DEBUG_ENV, "") not in {"", "0"}:
            sys.stderr.write("".join(traceback.format_exception(error)))
        elif isinstance(error, ToolError):
            errors.print(f"error: {safe(str(error))}", markup=False, soft_wrap=True)
        else:
            errors.print(_unexpected(error), markup=False, soft_wrap=True)
        return EXIT_ERROR
    return code


def _annotate(problems: Sequence[Problem], root: Path) -> None:
    """One GitHub Actions annotation per problem, on its file's line (the runner reads workflow
    commands from stderr as from stdout); paths are the workspace's, where the checkout is."""
    from gatewayctl.errors import annotation

    workspace = os.path.abspath(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())
    for problem in problems:
        path = os.path.abspath(root / problem.path)
        relative = os.path.relpath(path, workspace)
        outside = relative == os.pardir or relative.startswith(os.pardir + os.sep)
        inside = os.path.isfile(path) and not outside
        line = annotation(problem, Path(relative).as_posix() if inside else None)
        sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _unexpected(error: Exception) -> str:
    """One line for an exception the tool did not expect: its type, its message, and how to
    get the traceback."""
    message = printable(safe(str(error)))  # one line, whatever the message holds
    named = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return f"error: {named} ({DEBUG_HINT})"


if __name__ == "__main__":
    sys.exit(main())

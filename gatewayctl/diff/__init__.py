"""Offline diff: what a change to the declarations or the program does to a stack's render.

``python -m gatewayctl diff <stack>|--all --base <git-ref>`` renders each stack twice and prints a
Markdown report for a pull-request comment:

- the **base** side is the ref checked out into a temporary ``git worktree`` and rendered by
  *the ref's own* program and declarations (``python -m gatewayctl render <stack> --out DIR -q``
  run inside the worktree with this interpreter); a ref without the stack, or without an
  offline render at all, is an empty side and the report says so;
- the **head** side is this working tree, rendered in process (``gatewayctl.engine.render``), or in
  worker processes when there are several stacks (``gatewayctl.engine.parallel``), while the base
  renders: the two sides render at the same time;
- the base side's render is kept under ``build/diff-cache/`` (:mod:`.cache`), keyed by the base
  commit's tree, the lock file and the interpreter, so the next diff against the same base
  renders only the working tree.

Three modules, one step each: :mod:`.sides` builds the two sides (the base render, the secrets
of each stack file; git and the base checkout are :mod:`.repository`'s), :mod:`.compare` returns
what changed as data (what the providers will do: :mod:`.operations`, on the rules of
:mod:`.rules`, reading the plan's entries with :mod:`.plan`), :mod:`.report` writes the Markdown
within :data:`~.report.REPORT_LIMIT` characters. Nothing is decrypted or read from
a backend: the render already redacts every secret. As a second guard, every value in the two
renders that equals a plaintext ``clusterSecrets`` value of either side is replaced by the
render's marker before anything is compared or formatted (``gatewayctl.engine.redaction.Scrubber``:
by value, never by substring, so ``Config`` as a password leaves ``kind: ConfigMap`` alone). A
secret value that differs between the sides, plaintext or ``secure:`` ciphertext, is only said
to have changed, and counts as a change.

The command itself, both sides to the report, is :mod:`.command` (this package's modules
import none of it: no cycle through the package).
"""

"""``python -m gatewayctl status <stack> [<gateway>] --from FILE...``: an Argo CD-like status
per gateway from what the Pulumi CLI writes (``pulumi refresh --preview-only --json``,
``pulumi preview --json``, ``pulumi stack export``), with no CLI, backend or cluster of its
own.

One concern per module: :mod:`.models` (the CLI's formats, cited), :mod:`.inputs` (reading
the files), :mod:`.tree` (URN → gateway through the parent chain), :mod:`.sync`,
:mod:`.health`, :mod:`.certificates`, :mod:`.age` (the state's time and age), :mod:`.core`
(a gateway's status), :mod:`.resources` (a gateway's resource tree), :mod:`.selfheal` (what
the scheduled check may do), :mod:`.formats` (Markdown, JSON, YAML), :mod:`.view` (the
terminal's list and tree), :mod:`.command` (the command).

The overall state, and the exit code ``gatewayctl.cli.status`` gives it (:func:`.core.state`):
``degraded`` (4: a gateway Degraded or Progressing) before ``out-of-sync`` (3: a resource
differs, or a live object is missing) before ``renewal-due`` (5: a certificate inside its
renewal window) before ``synced`` (0).
"""

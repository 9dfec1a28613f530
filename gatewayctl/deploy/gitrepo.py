"""The git ``rollback`` runs: commits and files read by object name, trees exported to a
temporary directory, and a commit made with a temporary index and ``git commit-tree`` (then a
new branch by ``git update-ref`` with no old value, or a patch by ``git format-patch``), so
that the checkout's working tree, index, HEAD and branches other than the new one are never
touched.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path

from gatewayctl import interrupts
from gatewayctl.errors import ToolError, UsageError

TIMEOUT = 120
IDENTITY = {"GIT_AUTHOR_NAME": "gatewayctl", "GIT_AUTHOR_EMAIL": "gatewayctl@localhost"}


class Repository:
    """The git repository the project ``root`` is in; paths are the project's (relative to
    ``root``), ``prefix`` turns them into the repository's."""

    def __init__(self, root: Path) -> None:
        self.root = root
        found = self._run("rev-parse", "--show-prefix", check=False)
        if found.returncode != 0:
            raise UsageError(f"{root} is not in a git repository: rollback makes a git change")
        self.prefix = found.stdout.strip()
        self.top = self._run("rev-parse", "--show-toplevel").stdout.strip()

    def _run(
        self, *args: str, check: bool = True, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        try:
            done = interrupts.run(
                ["git", "-C", str(self.root), *args],
                timeout=TIMEOUT,
                env={**os.environ, **env} if env is not None else None,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ToolError(f"git {args[0]} failed: {error}") from None
        if check and done.returncode != 0:
            raise ToolError(f"git {' '.join(args[:2])} failed: {done.stderr.strip()[:500]}")
        return done

    def commit(self, ref: str) -> str:
        """The commit ``ref`` names; UsageError when it names none."""
        found = self._run("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        if found.returncode != 0 or not found.stdout.strip():
            raise UsageError(f"--to {ref!r} names no commit of this repository")
        return found.stdout.strip()

    def show(self, commit: str, path: str) -> str | None:
        """The text of the project's ``path`` at ``commit``; None when it has no such file."""
        found = self._run("cat-file", "blob", f"{commit}:{self.prefix}{path}", check=False)
        return found.stdout if found.returncode == 0 else None

    def export(self, commit: str, destination: Path) -> None:
        """The project's files at ``commit`` written under ``destination`` (``git archive``)."""
        tree = f"{commit}:{self.prefix}" if self.prefix else commit
        try:
            done = subprocess.run(
                # From the top: in a subdirectory, archive keeps only that directory's part of
                # the tree it is given.
                ["git", "-C", self.top, "archive", "--format=tar", tree],
                capture_output=True,
                timeout=TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ToolError(f"git archive failed: {error}") from None
        if done.returncode != 0:
            raise ToolError(f"git archive {commit[:12]} failed: {done.stderr.decode()[:500]}")
        with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
            archive.extractall(destination, filter="data")

    def removals(self, since: str) -> dict[str, list[str]]:
        """Per project path, the commits after ``since`` up to HEAD on the first-parent line
        (what was merged and deployed) that removed it, oldest first: one ``git log``."""
        found = self._run(
            "log",
            "--first-parent",
            "--diff-filter=D",
            "--no-renames",
            "--format=commit %H",
            "--name-only",
            f"{since}..HEAD",
            "--",
            f":/{self.prefix}",
        )
        removed: dict[str, list[str]] = {}
        commit = ""
        for line in found.stdout.splitlines():
            if line.startswith("commit "):
                commit = line.removeprefix("commit ")
            elif line and line.startswith(self.prefix):
                removed.setdefault(line.removeprefix(self.prefix), []).insert(0, commit)
        return removed

    def make_commit(self, head: str, files: Mapping[str, str], message: str) -> str:
        """A commit whose parent is ``head`` and whose tree is ``head``'s with ``files`` (the
        project's paths and their new text); its name. Nothing of the checkout changes."""
        with tempfile.TemporaryDirectory(prefix="gatewayctl-rollback-") as work:
            env = {"GIT_INDEX_FILE": str(Path(work) / "index")}
            self._run("read-tree", head, env=env)
            for path, text in sorted(files.items()):
                full = f"{self.prefix}{path}"
                staged = self._run("ls-files", "--stage", "--", f":/{full}", env=env).stdout
                mode = staged.split()[0] if staged else "100644"
                blob = Path(work) / "blob"
                blob.write_bytes(text.encode("utf-8"))
                name = self._run("hash-object", "-w", "--path", full, str(blob)).stdout.strip()
                self._run("update-index", "--add", "--cacheinfo", f"{mode},{name},{full}", env=env)
            tree = self._run("write-tree", env=env).stdout.strip()
        known = self._run("var", "GIT_AUTHOR_IDENT", check=False).returncode == 0
        identity = {} if known else {**IDENTITY, "GIT_COMMITTER_NAME": "gatewayctl"}
        if not known:
            identity["GIT_COMMITTER_EMAIL"] = IDENTITY["GIT_AUTHOR_EMAIL"]
        made = self._run("commit-tree", tree, "-p", head, "-m", message, env=identity)
        return made.stdout.strip()

    def branch_exists(self, name: str) -> bool:
        found = self._run("rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False)
        return found.returncode == 0

    def check_branch_name(self, name: str) -> None:
        if self._run("check-ref-format", "--branch", name, check=False).returncode != 0:
            raise UsageError(f"--branch {name!r} is not a valid branch name")
        if self.branch_exists(name):
            raise UsageError(f"--branch {name!r} exists already: choose another name")

    def create_branch(self, name: str, commit: str) -> None:
        """``refs/heads/<name>`` at ``commit``; fails when it exists (no old value given)."""
        zero = "0" * len(commit)
        self._run("update-ref", "-m", "gatewayctl rollback", f"refs/heads/{name}", commit, zero)

    def patch(self, commit: str) -> str:
        """The commit as ``git format-patch`` writes it (for ``git am``)."""
        return self._run("format-patch", "-1", "--stdout", commit).stdout

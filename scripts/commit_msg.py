"""The commit-msg hook (``.pre-commit-config.yaml``; CONTRIBUTING.md, "Commit messages"): the
subject at most 72 characters, in the imperative, then a blank line before any body, so that
``git log --oneline`` and ``git blame`` stay readable. Exit 1 naming the rule broken.

Comment lines (``#``, as ``git commit`` leaves them in the editor) and the scissors line's
remainder are not part of the message (git's ``--cleanup=strip`` default)."""

from __future__ import annotations

import sys
from pathlib import Path

SUBJECT_MAX = 72
SCISSORS = "# ------------------------ >8 ------------------------"


def message_lines(text: str) -> list[str]:
    """The message as git keeps it: comment lines and everything below the scissors dropped,
    trailing blank lines too."""
    kept: list[str] = []
    for line in text.splitlines():
        if line == SCISSORS:
            break
        if not line.startswith("#"):
            kept.append(line.rstrip())
    while kept and not kept[-1]:
        kept.pop()
    while kept and not kept[0]:
        kept.pop(0)
    return kept


def problems(text: str) -> list[str]:
    """Why the message breaks the rule (empty: it keeps it)."""
    lines = message_lines(text)
    if not lines:
        return ["the message is empty"]
    subject = lines[0]
    found = []
    if len(subject) > SUBJECT_MAX:
        found.append(
            f"the subject is {len(subject)} characters; at most {SUBJECT_MAX}: put the why,"
            " the figures and the tests in the body, after a blank line"
        )
    if subject.endswith("."):
        found.append("the subject ends with a full stop")
    if len(lines) > 1 and lines[1]:
        found.append("the second line is not blank: a blank line separates subject and body")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: commit_msg.py COMMIT_MSG_FILE", file=sys.stderr)
        return 2
    found = problems(Path(argv[1]).read_text(encoding="utf-8"))
    for problem in found:
        print(f'commit message: {problem} (CONTRIBUTING.md, "Commit messages")', file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

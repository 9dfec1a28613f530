"""How the strict YAML reader words a file YAML cannot parse
(``gatewayctl.inputs.yamlproblems``): ``invalid YAML:`` with its line, in the library's words cut
where they would quote the input.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.builders import head, write_declaration_text, write_stack
from tests.helpers import load_problems, located_problems, where

# --- invalid YAML names its line ------------------------------------------------------------


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    write_stack(tmp_path)
    source = write_declaration_text(tmp_path, "team-a.yaml", head("team-a") + " spec: {}\n")

    problems = located_problems(tmp_path)

    assert where(problems) == [(f"{source}:5:2", "")]
    assert problems[0][2].startswith("invalid YAML: ")


def test_unclosed_flow_mapping_is_invalid_yaml(tmp_path: Path) -> None:
    write_stack(tmp_path)
    text = head("team-a") + "spec:\n  exposure: {host: x.example.org\n"
    source = write_declaration_text(tmp_path, "team-a.yaml", text)

    problems = load_problems(tmp_path)

    assert where(problems) == [(source, "")]
    # libyaml's wording (PyYAML's own parser says "expected ',' or '}', but got ...", which the
    # reader cuts: what was found may be a secret's token).
    assert re.fullmatch(r"invalid YAML: (did not find )?expected ',' or '}'", problems[0][2])

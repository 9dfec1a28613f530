"""``gatewayctl.secrets``: plaintext ``clusterSecrets`` of a stack file (``plaintext_leaves``),
read with the strict YAML reader like every other file, and scrubbing free text."""

from __future__ import annotations

from pathlib import Path

from gatewayctl.secrets import plaintext_leaves, scrub

PREFIX = "hypershell-gateways:"


def write(root: Path, text: str) -> None:
    (root / "Pulumi.s.yaml").write_text(text, encoding="utf-8")


def test_every_plaintext_value_by_its_path_and_no_secure_value(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"""\
config:
  {PREFIX}clusterSecrets:
    east:
      dbAdminPassword: hunter2-plaintext
      kubeconfig:
        secure: v1:not-plaintext
      extra: [one, {{secure: x}}, 3]
    west:
      secure: v1:whole-cluster
    none: null
  {PREFIX}images: {{gateway: not-a-secret}}
""",
    )
    assert plaintext_leaves(tmp_path, "s") == [
        (("east", "dbAdminPassword"), "hunter2-plaintext"),
        (("east", "extra", "0"), "one"),
        (("east", "extra", "2"), 3),
        (("none",), None),
    ]


def test_secrets_of_one_secure_value_have_no_plaintext(tmp_path: Path) -> None:
    write(tmp_path, f"config:\n  {PREFIX}clusterSecrets:\n    secure: v1:all\n")
    assert plaintext_leaves(tmp_path, "s") == []


def test_a_file_the_strict_reader_refuses_gives_none(tmp_path: Path) -> None:
    # A duplicate key: PyYAML's own loader would keep the last value; the strict reader, which
    # validates the stack, refuses the file (the stack is invalid input for every command).
    write(
        tmp_path,
        f"config:\n  {PREFIX}clusterSecrets:\n    east: {{dbAdminPassword: first-value}}\n"
        "    east: {dbAdminPassword: second-value}\n",
    )
    assert plaintext_leaves(tmp_path, "s") == []


def test_no_file_no_config_or_no_secrets_give_none(tmp_path: Path) -> None:
    assert plaintext_leaves(tmp_path, "s") == []
    write(tmp_path, "secretsprovider: passphrase\n")
    assert plaintext_leaves(tmp_path, "s") == []
    write(tmp_path, "config: [a, b]\n")
    assert plaintext_leaves(tmp_path, "s") == []
    write(tmp_path, f"config:\n  {PREFIX}declarationsDir: gateways/s\n")
    assert plaintext_leaves(tmp_path, "s") == []


# --- scrubbing free text -------------------------------------------------------------------


def test_the_base_render_error_line_is_scrubbed_by_token() -> None:
    line = "error: admin_user 'admin' rejected for ConfigMap (admin)"
    assert scrub(line, {"admin", "Config"}) == (
        "error: admin_user '[secret]' rejected for ConfigMap ([secret])"
    )

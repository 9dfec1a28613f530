"""``gatewayctl.diff.access``: who gains or loses a gateway's roles, from two plans, and the
lines the diff's summary shows for it."""

from __future__ import annotations

from typing import Any

from gatewayctl.diff.access import AccessChange, SignInChange, access_changes, access_lines
from gatewayctl.diff.compare import ResourceChange, StackDiff
from gatewayctl.diff.report import build_report

ISSUER = "https://sso.example.com/realms/r"


def gateway(name: str, admins: list[str], users: list[str], **facts: Any) -> dict[str, Any]:
    entry = {
        "name": name,
        "signIn": "keycloak",
        "issuer": ISSUER,
        "clientId": f"openshell-{name}",
        "access": {"admins": admins, "users": users},
    }
    return entry | facts


def plan(*gateways: dict[str, Any]) -> dict[str, Any]:
    return {"gateways": list(gateways), "resources": []}


def test_gains_and_losses_per_gateway_and_role() -> None:
    base = plan(gateway("a", ["user:alice", "group:/ops"], ["group:/t"]), gateway("b", [], []))
    head = plan(gateway("a", ["group:/ops"], ["group:/t", "user:alice"]), gateway("b", [], []))
    assert access_changes(base, head) == (
        [
            AccessChange(gateway="a", principal="user:alice", role="admin", change="loses"),
            AccessChange(gateway="a", principal="user:alice", role="user", change="gains"),
        ],
        [],
    )


def test_an_added_or_removed_gateway_gains_or_loses_everyone() -> None:
    base = plan(gateway("old", ["user:bob"], []))
    head = plan(gateway("new", [], ["group:/t"]))
    changes, sign_in = access_changes(base, head)
    assert changes == [
        AccessChange(gateway="new", principal="group:/t", role="user", change="gains"),
        AccessChange(gateway="old", principal="user:bob", role="admin", change="loses"),
    ]
    assert sign_in == []


def test_sign_in_changes_are_listed_by_field() -> None:
    base = plan(gateway("a", [], []))
    head = plan(gateway("a", [], [], signIn="oidc", issuer="https://idp.example.com", clientId="x"))
    assert access_changes(base, head)[1] == [
        SignInChange(gateway="a", field="signIn", old="keycloak", new="oidc"),
        SignInChange(gateway="a", field="issuer", old=ISSUER, new="https://idp.example.com"),
        SignInChange(gateway="a", field="clientId", old="openshell-a", new="x"),
    ]


def test_plans_from_before_sign_in_compare_as_no_one() -> None:
    # A base rendered before this change has no access entries at all.
    base = {"gateways": [{"name": "a"}], "resources": []}
    head = plan(gateway("a", ["user:alice"], []))
    changes, sign_in = access_changes(base, head)
    assert changes == [
        AccessChange(gateway="a", principal="user:alice", role="admin", change="gains")
    ]
    assert [s.field for s in sign_in] == ["signIn", "issuer", "clientId"]


def test_the_summary_lines_are_bounded() -> None:
    changes = [
        AccessChange(gateway="a", principal=f"user:u{i:03}", role="user", change="gains")
        for i in range(45)
    ]
    lines = access_lines(changes, [])
    assert lines[0] == "**Access** (who gains or loses a role, sign-in changes):"
    assert lines[2] == "- `a`: `user:u000` **gains** user"
    assert lines[-2] == "- ... 5 more line(s)"
    assert access_lines([], []) == []


def test_the_report_summary_shows_access_changes() -> None:
    diff = StackDiff(
        stack="ibm",
        base_note=None,
        head_note=None,
        gateways=(),
        objects=(),
        resources=(),
        access=(AccessChange(gateway="a", principal="group:/t", role="admin", change="loses"),),
        sign_in=(SignInChange(gateway="a", field="issuer", old=None, new=ISSUER),),
    )
    # Access changes come with their role-mapping resources; a diff with none shows nothing.
    assert "**Access**" not in build_report([diff], base_label="b", command="c")
    changed = StackDiff(
        **{
            **diff.__dict__,
            "resources": (
                ResourceChange(
                    type="keycloak:index/groupRoles:GroupRoles",
                    name="a-identity-access-group-x",
                    status="removed",
                    fields=(),
                ),
            ),
        }
    )
    report = build_report([changed], base_label="b", command="c")
    assert "- `a`: `group:/t` **loses** admin\n" in report
    assert f"- `a`: sign-in `issuer` - -> `{ISSUER}`\n" in report

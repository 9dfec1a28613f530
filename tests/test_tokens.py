"""Component type tokens (components/tokens.py): every URN below a component carries its token."""

from __future__ import annotations

from components import tokens
from gatewayctl.engine.render import Rendered
from policy.hypershell_policies import network


def test_tokens_are_those_of_the_state() -> None:
    # Part of every URN in existing stacks' state: renaming one would make the engine replace
    # every resource below the component.
    assert tokens.ALL == (
        "hypershell:cluster:Cluster",
        "hypershell:gateway:Gateway",
        "hypershell:gateway:Pki",
        "hypershell:gateway:Database",
        "hypershell:gateway:Workload",
        "hypershell:gateway:Exposure",
        "hypershell:gateway:Identity",
        "hypershell:gateway:Console",
    )
    assert all(token.startswith(f"{tokens.PACKAGE}:") for token in tokens.ALL)


def test_every_component_of_a_stack_registers_a_token(any_stack: Rendered) -> None:
    registered = {
        r.type for r in any_stack.recording.resources.values() if r.type.startswith("hypershell")
    }
    assert registered == set(tokens.ALL)


def test_the_policy_pack_names_the_gateway_component_by_its_token() -> None:
    # The pack runs in its own virtualenv without the program's packages: it keeps a copy.
    assert network.GATEWAY_COMPONENT == tokens.GATEWAY

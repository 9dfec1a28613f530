"""Status's parent chain: the gateway each resource of a state belongs to (status.tree)."""

from __future__ import annotations

from gatewayctl.status.models import ResourceV3
from gatewayctl.status.tree import Tree, parse_urn
from tests.status_builders import gateway_resources, stack_resources

# --- the parent chain ----------------------------------------------------------------------------


def test_urn_names_may_hold_double_colons_and_the_parent_chain_finds_the_gateway() -> None:
    parsed = parse_urn("urn:pulumi:s::p::a:b:C$d:e:F::name::with::colons")
    assert parsed is not None and (parsed.type, parsed.name) == ("d:e:F", "name::with::colons")
    assert parse_urn("not-a-urn") is None
    resources = [ResourceV3.model_validate(r) for r in gateway_resources("x")]
    tree = Tree(resources)
    owners = {tree.gateway_of(r.urn) for r in resources}
    assert owners == {"x"}
    provider = ResourceV3.model_validate(stack_resources({})[2])
    assert Tree([*resources, provider]).gateway_of(provider.urn) is None


def test_a_stack_level_provider_made_from_one_gateways_resources_is_that_gateways() -> None:
    # The database owner's provider is a child of the stack (components/database.py) made from
    # the gateway's Role, Database and password; a stack-level provider made from nothing of a
    # gateway's, or from two gateways', is the stack's.
    resources = [ResourceV3.model_validate(r) for r in gateway_resources("x")]
    resources += [ResourceV3.model_validate(r) for r in gateway_resources("y")]
    in_x = [r.urn for r in resources if Tree(resources).gateway_of(r.urn) == "x"][-2:]
    in_y = [r.urn for r in resources if Tree(resources).gateway_of(r.urn) == "y"][-1:]
    stack = "urn:pulumi:s::p::pulumi:pulumi:Stack::p-s"

    def provider(name: str, dependencies: list[str]) -> ResourceV3:
        return ResourceV3(
            urn=f"urn:pulumi:s::p::pulumi:providers:postgresql::{name}",
            type="pulumi:providers:postgresql",
            custom=True,
            parent=stack,
            dependencies=dependencies,
        )

    owner = provider("x-database-db-owner", in_x)
    free = provider("shared", [])
    both = provider("both", [*in_x, *in_y])
    tree = Tree([*resources, owner, free, both])
    assert tree.gateway_of(owner.urn) == "x"
    assert tree.gateway_of(free.urn) is None
    assert tree.gateway_of(both.urn) is None

"""Pulumi entry point: load and validate the stack, build one Gateway per declaration, export.

Everything lives in ``gatewayctl.engine.program`` so the offline render and the tests run the same
code.
"""

import pulumi

from gatewayctl.engine.program import main
from gatewayctl.errors import InvalidInputError

try:
    main()
except InvalidInputError as error:
    # RunError ends the program with the message alone, one line per problem, no traceback.
    raise pulumi.RunError(f"invalid stack input:\n{error}") from None

"""Pulumi entry point: load and validate the stack, build one Gateway per declaration, export.

Everything lives in ``stacks.program`` so the offline render and the tests run the same code.
"""

import pulumi

from stacks.errors import InvalidInputError
from stacks.program import main

try:
    main()
except InvalidInputError as error:
    # RunError ends the program with the message alone, one line per problem, no traceback.
    raise pulumi.RunError(f"invalid stack input:\n{error}") from None

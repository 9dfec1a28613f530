"""Phase 1, inputs: the files as validated models.

The strict YAML reader, the stack file, the declarations directory, the pydantic models of a
stack and a gateway, the reserved names, the JSON Schema and its reference. Nothing here
decides across files; it imports only the foundation (``errors``, ``typos``) and components'
pure vocabulary (docs/architecture.md).
"""

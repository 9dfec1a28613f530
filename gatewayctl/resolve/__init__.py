"""Phase 2, resolve: every decision made before a resource is registered.

All of a stack's files validated together, each gateway's sign-in, console, credential
driver and release binding, the stacks of the repository, and the prepared stack a render
runs. It imports inputs and components' pure vocabulary, never the engine
(docs/architecture.md).
"""

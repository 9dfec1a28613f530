"""Operations on a deployment, beside ``diff`` and ``status``: adoption of existing objects
(``import-file``), the Pulumi Kubernetes Operator's settings, and release promotion. They
read renders and resolved stacks; the CLI calls them (docs/architecture.md).
"""

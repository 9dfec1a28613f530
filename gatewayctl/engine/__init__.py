"""Phase 3, engine: the Pulumi program, run by the real engine or offline.

The program registers the components of a resolved stack; the offline engine (a recording
mock) runs it with no CLI, cluster or credentials; render writes the manifests and plan, in
worker processes when the work is large. It imports resolve and inputs (docs/architecture.md).
"""

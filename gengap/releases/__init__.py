"""The release spine and the authors' tools: suites, releases, reading and verifying them,
fresh test parts, audits, multi-task configs, the schemas and fingerprints.

The middle layer (docs/architecture.md): it may import the ground and the packages, never a
command. Kept empty, so that importing one module imports only what that module needs.
"""

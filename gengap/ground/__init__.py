"""The ground: files published safely (files, ownership, locking, staging), limits, signals,
errors, progress, worker processes and the memory tuning that every command stands on.

The lowest of gengap's own layers (docs/architecture.md): it may import gengap.generators,
gengap.splits, gengap.harnesses and gengap.data_cards, never the releases or the commands.
Kept empty, so that importing one module imports only what that module needs.
"""

"""The task modules: each file registers its tasks with ``@generators.registry.register``.

Adding a task means adding one module here; the registry imports every module of this
package on first use. Modules starting with ``_`` are private helpers and are not imported
by the registry.
"""

"""The task modules: each file registers its tasks with ``@gengap.generators.registry.register``.

Adding a task means adding its module here (or its class to one) and its name to
``gengap.generators.registry.TASK_MODULES``, so that looking it up imports its module only
(tests/test_registry_table.py checks the table). Modules starting with ``_`` are private
helpers and are not imported by the registry.
"""

"""gengap: synthetic generalization benchmarks.

The packages live under one import name: ``gengap.generators``, ``gengap.splits``,
``gengap.baselines``, ``gengap.harnesses`` and ``gengap.data_cards`` (folders at the
repository's top level, mapped under ``gengap`` by the build; in a source checkout this
package's path reaches them). Their old top-level names are deprecated aliases
(gengap.legacy_names).
"""

import os as _os

from gengap import legacy_names as _legacy_names

__version__ = "0.1.0"

_source_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(__path__[0], "generators")) and _os.path.isfile(
    _os.path.join(_source_root, "generators", "__init__.py")
):
    __path__.append(_source_root)  # a source checkout: gengap.generators is ../generators

_legacy_names.install()

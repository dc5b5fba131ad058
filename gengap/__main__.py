"""``python -m gengap``: the ``gengap`` console script (gengap.entry)."""

import sys

from gengap.commands.entry import main

sys.exit(main())

"""``python -m gengap``: the ``gengap`` console script (gengap.entry)."""

import sys

from gengap.entry import main

sys.exit(main())

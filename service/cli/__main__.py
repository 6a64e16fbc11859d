"""``python -m service.cli``: the same as ``plb``."""

import sys

from service.cli import main

sys.exit(main())

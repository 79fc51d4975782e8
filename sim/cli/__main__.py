"""``python -m sim.cli``: the ``flashplan`` command."""

import sys

from sim.cli.flashplan import main

sys.exit(main())

"""`python -m tutor.cli`: the same program as the `gpu-tutor` console script (tests and the pty and
workshop runs start it this way, with the interpreter they choose)."""

import sys

from . import main

sys.exit(main())

"""`python -m otelgrade` runs the command line."""

import sys

from otelgrade.cli import main

sys.exit(main())

"""`python -m tensorweave ...` runs the CLI."""

import sys

from tensorweave.cli.main import main

sys.exit(main())

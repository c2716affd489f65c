"""`python -m tensorweave ...` runs the CLI."""

import gc
import sys

# NOTE: a CLI process (a `tensorweave server` task above all) imports ~700 modules whose
# objects live until it exits. With the cyclic collector off while they load and those
# objects frozen afterwards (moved out of the collected generations), start-up skips the
# collections that scanned them again and again, and later collections skip them too.
gc.disable()
from tensorweave.cli.main import main  # noqa: E402

gc.freeze()
gc.enable()
sys.exit(main())

"""`python3 -m kernelwatch` runs the same CLI as the `kernelwatch` console script."""

import sys

from kernelwatch.cli import main

sys.exit(main())

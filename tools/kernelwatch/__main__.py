"""`python3 -m kernelwatch` runs the same CLI as the `kernelwatch` console script."""

import sys

try:
    from kernelwatch.cli import main
except KeyboardInterrupt:  # Ctrl-C while Python imports: one line, as in main
    print("kernelwatch: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())

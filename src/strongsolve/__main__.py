import sys

from strongsolve.cli import main

sys.exit(main())

import sys

from benchsmith.cli import main

sys.exit(main())

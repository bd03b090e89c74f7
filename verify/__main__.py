import sys

from verify.cli import main

sys.exit(main(sys.argv[1:]))

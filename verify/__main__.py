import sys

from verify import check_not_shadowed

check_not_shadowed()

from theory.cli_support import run_main  # noqa: E402
from verify.cli import main  # noqa: E402  (after the check: a shadowing verify fails first)

sys.exit(run_main(main, sys.argv[1:]))

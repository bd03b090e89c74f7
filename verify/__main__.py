import sys

from verify import check_not_shadowed

check_not_shadowed()

from verify.cli import main  # noqa: E402  (after the check: a shadowing verify fails first)

sys.exit(main(sys.argv[1:]))

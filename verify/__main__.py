import os
import sys

from verify import check_not_shadowed

check_not_shadowed()

from theory.cli_support import run_main  # noqa: E402
from verify.cli import main  # noqa: E402  (after the check: a shadowing verify fails first)

status = run_main(main, sys.argv[1:])
if os.environ.get("RECALL_WORKER"):
    # a worker of the parallel runner (verify.parallel) has printed and stored every record: it
    # leaves without the interpreter's teardown of torch and of the run's shared results (about
    # 0.8 CPU-s a worker), which changes nothing it wrote
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
sys.exit(status)

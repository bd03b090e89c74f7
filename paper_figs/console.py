"""The console script ``recall-bounds`` (README.md#command-line), beside the ``python -m`` forms:

    recall-bounds verify ...    = python -m verify ...
    recall-bounds theory ...    = python -m theory ...
    recall-bounds figs ...      = python -m paper_figs ...

It lives in paper_figs, the stage that may import every other one. Before dispatching it checks
that the ``verify`` it would import is this toolkit's (another distribution named ``verify``
exists on the package index) and fails loudly otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import sys

COMMANDS = {"verify": "python -m verify", "theory": "python -m theory", "figs": "python -m paper_figs"}


def _check_verify_is_ours() -> None:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.find_spec("verify")
    origin = os.path.abspath(spec.origin) if spec and spec.origin else None
    if origin != os.path.join(here, "verify", "__init__.py"):
        raise SystemExit(
            f"recall-bounds: the 'verify' package on sys.path is {origin}, not this "
            f"toolkit's ({os.path.join(here, 'verify')}); another distribution named "
            "'verify' shadows it. Uninstall it (pip uninstall verify)."
        )
    from verify import check_not_shadowed

    check_not_shadowed()


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        lines = "\n".join(f"  recall-bounds {k} ...   ({v} ...)" for k, v in COMMANDS.items())
        print(f"usage:\n{lines}", file=sys.stderr if argv else sys.stdout)
        return 0 if argv in ([], ["-h"], ["--help"]) else 2
    command, rest = argv[0], argv[1:]
    if command == "theory":
        from theory.__main__ import main as run
    elif command == "figs":
        _check_verify_is_ours()
        from paper_figs.__main__ import main as run
    else:
        _check_verify_is_ours()
        from verify.cli import main as run
    from theory.cli_support import run_main

    return run_main(run, rest)


if __name__ == "__main__":
    sys.exit(main())

"""``python -m theory list [--json]`` and ``python -m theory eval NAME key=value ... [--json] [--latex]``."""

from __future__ import annotations

import argparse
import json
import sys

from theory.registry import get_bound, load_all


def _parse_value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    raise ValueError(f"parameter value {text!r} is not a number")


def _parse_assignments(items):
    params = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"expected key=value, got {item!r}")
        key, value = item.split("=", 1)
        params[key] = _parse_value(value)
    return params


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m theory", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", help="every bound with statement and provenance")
    p_list.add_argument("--json", action="store_true")
    p_eval = sub.add_parser("eval", help="evaluate one bound")
    p_eval.add_argument("name")
    p_eval.add_argument("assignments", nargs="*", metavar="key=value")
    p_eval.add_argument("--json", action="store_true")
    p_eval.add_argument("--latex", action="store_true")
    _add_plugins(sub)
    args = parser.parse_args(argv)
    try:
        if args.cmd == "list":
            bounds = load_all()
            rows = [
                {
                    "name": b.name,
                    "provenance": b.provenance,
                    "params": dict(b.params),
                    "statement": b.statement,
                    "source": b.source,
                }
                for b in bounds.values()
            ]
            if args.json:
                print(json.dumps(rows, indent=2))
            else:
                for row in rows:
                    params = ", ".join(row["params"])
                    print(f"{row['name']}({params})  [{row['provenance']}]\n    {row['statement']}")
            return 0
        if args.cmd == "eval":
            bound = get_bound(args.name)
            params = _parse_assignments(args.assignments)
            value = bound.evaluate(**params)
            latex = bound.latex() if (args.latex or args.json) else None
            if args.json:
                print(
                    json.dumps(
                        {
                            "name": bound.name,
                            "params": params,
                            "value": value,
                            "provenance": bound.provenance,
                            "statement": bound.statement,
                            "latex": latex,
                        }
                    )
                )
            else:
                print(f"{bound.name}{params} = {value}")
                if args.latex and latex:
                    print(latex)
            return 0
        return args.func(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _add_plugins(sub) -> None:
    """Area-specific subcommands (e.g. ``flops``) register here via ``theory.<area>.add_cli``."""
    import importlib

    from theory.registry import area_modules

    for name in area_modules("theory"):
        module = importlib.import_module(name)
        hook = getattr(module, "add_cli", None)
        if hook is not None:
            hook(sub)  # must call parser.set_defaults(func=...) on what it adds


if __name__ == "__main__":
    sys.exit(main())

"""The bounds of every paper from the command line.

    python -m theory list [PATTERN ...] [--label [LABEL]] [--json]
        every bound (or those a PATTERN selects: an area, a name, a glob, a paper label) with its
        parameters, their paper symbols and defaults, its label, statement and provenance;
        --label alone lists the labelled bounds by label (AREA.LABEL), --label B2 those labelled B2
    python -m theory eval NAME key=value ... [--json] [--latex]
        NAME is a bound's name, AREA.LABEL (fact_mlp.B2) or a bare label where one bound has it;
        a key is a parameter name or its paper symbol (N for n_subjects); key=1,10,100 evaluates
        a grid, one row per point (every combination when several keys have lists; at most
        100,000 points, theory.registry.MAX_GRID_POINTS)

--json writes strict JSON: a non-finite value is null with its value in ``value_nonfinite``.
"""

from __future__ import annotations

import argparse
import sys

from theory.cli_support import dumps, name_matches, parse_assignments, parse_number, run_main
from theory.registry import AREAS, Bound, check_grid_size, get_bound, load_all

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def parse_param_value(bound: Bound, name: str, text: str):
    """A command-line value of parameter ``name`` of ``bound``: a number, a comma-separated list
    of numbers (a grid axis), or, where the parameter's default is a string or a bool, that type.

    >>> from theory.registry import get_bound
    >>> parse_param_value(get_bound("fact_mlp.B2"), "n_values", "10,100,1000")
    [10, 100, 1000]
    >>> parse_param_value(get_bound("retrieval.n_sufficient"), "embedding", "orthogonal")
    'orthogonal'
    >>> parse_param_value(get_bound("geometric.d0_suff"), "n_subjects", "2,,3")
    Traceback (most recent call last):
    ...
    ValueError: parameter n_subjects (N): '2,,3' has an empty item (a grid axis is values separated by single commas, as 1,10,100)
    """
    if "," in text:
        items = [x.strip() for x in text.split(",")]
        if not any(items):
            raise ValueError(f"parameter {bound.named(name)}: {text!r} holds no value")
        if not all(items):
            raise ValueError(
                f"parameter {bound.named(name)}: {text!r} has an empty item (a grid axis is values "
                "separated by single commas, as 1,10,100)"
            )
        return [parse_param_value(bound, name, t) for t in items]
    default = bound.defaults().get(name)
    if isinstance(default, bool):
        low = text.strip().lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE
        raise ValueError(f"parameter {name}: {text!r} is not a truth value (true/false, 1/0)")
    if isinstance(default, str):
        return text.strip()
    return parse_number(text, name)


def bound_row(bound: Bound) -> dict:
    """What ``python -m theory list --json`` prints for one bound.

    >>> from theory.registry import get_bound
    >>> row = bound_row(get_bound("geometric.khop_dim_bound"))
    >>> row["defaults"], row["aliases"]["N"], row["label"]
    ({'bits_per_param': 32}, 'n_subjects', None)
    """
    return {
        "name": bound.name,
        "label": bound.label,
        "area_label": bound.area_label,
        "provenance": bound.provenance,
        "params": dict(bound.params),
        "aliases": dict(bound.aliases),
        "defaults": bound.defaults(),
        "statement": bound.statement,
        "source": bound.source,
    }


def select_bounds(patterns, label: str | None = None) -> list[Bound]:
    """The bounds any of ``patterns`` selects (all without one; see
    :func:`theory.cli_support.name_matches`, a pattern may also be a label or AREA.LABEL), and,
    with ``label``, only those carrying it ("" for every labelled bound).

    >>> [b.name for b in select_bounds(["hopfield"], label="R4")]
    ['hopfield.capacity', 'hopfield.capacity_c']
    >>> select_bounds(["zzz*"])
    []
    """
    bounds = list(load_all().values())
    if patterns:
        bounds = [b for b in bounds if any(name_matches(b.name, p, *_label_names(b)) for p in patterns)]
    if label is not None:
        bounds = [b for b in bounds if b.label and (label == "" or _label_selects(b, label))]
        bounds.sort(
            key=lambda b: (AREAS.index(b.area) if b.area in AREAS else len(AREAS), _label_key(b.label))
        )
    return bounds


def _label_names(b: Bound) -> tuple[str, ...]:
    return (b.label, b.area_label) if b.label else ()


def _label_selects(b: Bound, label: str) -> bool:
    return label.lower() in (b.label.lower(), b.area_label.lower()) or name_matches(b.area_label, label)


def _label_key(label: str):
    digits = "".join(ch for ch in label if ch.isdigit())
    return (label.rstrip("0123456789"), int(digits) if digits else 0, label)


def _cmd_list(args) -> int:
    label = None if args.label is None else args.label
    bounds = select_bounds(args.patterns, label)
    if not bounds:
        what = " ".join(args.patterns) + (f" --label {label}" if label else "")
        print(f"no bound matches {what.strip()!r}; `python -m theory list` shows them all", file=sys.stderr)
        if args.json:
            print("[]")
        return 0
    if args.json:
        print(dumps([bound_row(b) for b in bounds], indent=2))
        return 0
    for b in bounds:
        tag = f"[{b.provenance}" + (f", label {b.area_label}]" if b.label else "]")
        head = f"{b.name}({b.signature_text()})  {tag}"
        if label is not None:
            head = f"{b.area_label:<14} {head}"
        print(f"{head}\n    {b.statement}")
    return 0


def _fmt(value) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def _cmd_eval(args) -> int:
    bound = get_bound(args.name)
    raw = bound.canonical(parse_assignments(args.assignments))
    lengths = {bound.named(k): v.count(",") + 1 for k, v in raw.items() if "," in v}
    check_grid_size(bound.name, lengths)  # before a value is parsed
    values = {k: parse_param_value(bound, k, v) for k, v in raw.items()}
    defaults = {k: v for k, v in bound.defaults().items() if k not in values}
    grid = any(isinstance(v, list) for v in values.values())
    try:
        rows = bound.grid(**values)  # one row per point, every combination of the lists
    except TypeError as exc:  # a value of the wrong kind: the message names the bound and the point
        raise ValueError(str(exc)) from None
    latex = bound.latex() if (args.latex or args.json) else None

    def record(row):
        return {
            "name": bound.name,
            "label": bound.label,
            "area_label": bound.area_label,
            "params": row["params"],
            "defaults": row["defaults"],
            "value": row["value"],
            "provenance": bound.provenance,
            "statement": bound.statement,
            "latex": latex,
        }

    if args.json:
        out = [record(r) for r in rows]
        print(dumps(out if grid else out[0]))
        return 0
    label = f"  [{bound.area_label}]" if bound.label else ""
    if not grid:
        shown = [f"{k}={_fmt(v)}" for k, v in values.items()]
        shown += [f"{k}={_fmt(v)} (default)" for k, v in defaults.items()]
        print(f"{bound.name}({', '.join(shown)}) = {rows[0]['value']}{label}")
    else:
        keys = list(values)
        table = [[_fmt(r["params"][k]) for k in keys] + [str(r["value"])] for r in rows]
        head = keys + ["value"]
        widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head)]
        print(f"{bound.name}{label}: {len(rows)} points")
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        for t in table:
            print("  ".join(c.ljust(w) for c, w in zip(t, widths)).rstrip())
        if defaults:
            print("defaults: " + ", ".join(f"{k}={_fmt(v)}" for k, v in defaults.items()))
    if args.latex and latex:
        print(latex)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m theory", formatter_class=argparse.RawDescriptionHelpFormatter, description=__doc__
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", help="the bounds with parameters, defaults, labels, statements")
    p_list.add_argument(
        "patterns", nargs="*", metavar="PATTERN", help="an area, a name, a glob or a paper label"
    )
    p_list.add_argument(
        "--label",
        nargs="?",
        const="",
        default=None,
        metavar="LABEL",
        help="list the labelled bounds by paper label; with LABEL (B2, fact_mlp.B2) only those",
    )
    p_list.add_argument("--json", action="store_true", help="strict JSON, one object per bound")
    p_eval = sub.add_parser("eval", help="evaluate one bound at a point or on a grid")
    p_eval.add_argument("name", help="NAME, AREA.LABEL or a unique LABEL")
    p_eval.add_argument(
        "assignments", nargs="*", metavar="key=value", help="value: a number or a list 1,10,100 (a grid)"
    )
    p_eval.add_argument("--json", action="store_true", help="strict JSON: an object, or a list for a grid")
    p_eval.add_argument("--latex", action="store_true")
    _add_plugins(sub)
    args = parser.parse_args(argv)
    try:
        if args.cmd == "list":
            return _cmd_list(args)
        if args.cmd == "eval":
            return _cmd_eval(args)
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
    sys.exit(run_main(main))

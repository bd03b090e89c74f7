"""The itemised FLOP table of Mixture of Chapters (2603.21096), App. A.2, as the appendix prints
it: every sub-item, the category subtotals, the model totals and the parameter counts, from the
sympy counts of :mod:`theory.chapters.flops`; and its command line,
``python -m theory flops --config paper|toy|FILE [--json]``. Never imports torch.
"""

from __future__ import annotations

import json
from typing import Mapping

from theory.chapters.flops import (
    PAPER_CONFIG,
    TOY_CONFIG,
    evaluate,
    head_items,
    memory_layer_items,
    model_totals,
    parameter_counts,
    standard_layer_items,
    validate_config,
)


# -- the breakdown and the CLI -----------------------------------------------------------------
def breakdown(cfg: Mapping) -> dict:
    """The itemised table (like the paper's App. A.2 table): every sub-item with its exact value."""
    cfg = validate_config(cfg)

    def rows(items):
        return [
            {"group": g, "item": name, "formula": str(expr), "flops": evaluate(expr, cfg)}
            for g, name, expr in items
        ]

    std, mem, head = rows(standard_layer_items()), rows(memory_layer_items()), rows(head_items())
    totals = model_totals(cfg)
    out = {
        "config": cfg,
        "standard_layer": std,
        "standard_layer_total": sum(r["flops"] for r in std),
        "memory_layer_extra": mem,
        "memory_layer_extra_total": sum(r["flops"] for r in mem),
        "head": head,
        "head_total": sum(r["flops"] for r in head),
        "totals": totals,
        "ratios": {
            "moc_over_iso_flop": totals["moc"] / totals["iso_flop"],
            "moc_over_backbone": totals["moc"] / totals["backbone"],
        },
        "parameters": parameter_counts(cfg),
    }
    out["memory_layer_total"] = out["standard_layer_total"] + out["memory_layer_extra_total"]
    out["subtotals"] = {
        section: category_subtotals(out[section])
        for section in ("standard_layer", "memory_layer_extra", "head")
    }
    return out


def category_subtotals(rows) -> dict:
    """Sum of the sub-items of each category (group), in the order the items appear: the
    appendix's category subtotals (self-attention, MLP, router, router losses, memory
    preprocessing, memory attention, ...) [paper, App. A.2]."""
    sums: dict = {}
    for row in rows:
        sums[row["group"]] = sums.get(row["group"], 0) + row["flops"]
    return sums


def format_breakdown(table: dict) -> str:
    lines = []
    for title, key in (
        ("Standard layer", "standard_layer"),
        ("Memory layer (extra)", "memory_layer_extra"),
        ("Head", "head"),
    ):
        lines.append(f"{title}")
        group = None
        for row in table[key]:
            if row["group"] != group:
                group = row["group"]
                lines.append(f"  {group + ' (subtotal)':<55} {table['subtotals'][key][group]:>20,}")
            lines.append(f"    {row['item']:<53} {row['flops']:>20,}")
        lines.append(f"  {'total':<55} {table[key + '_total']:>20,}")
    lines.append(f"Memory layer (standard + extra) {table['memory_layer_total']:>45,}")
    t = table["totals"]
    n_layers, n_mem = table["config"]["n_layers"], len(table["config"]["mem_layers"])
    lines.append("Model forward totals (B = 1)")
    lines.append(f"  backbone ({n_layers} standard){'':<29} {t['backbone']:>20,}")
    lines.append(f"  iso-FLOP dense ({t['iso_flop_layers']} standard){'':<23} {t['iso_flop']:>20,}")
    lines.append(f"  MoC ({n_layers - n_mem} standard + {n_mem} memory){'':<22} {t['moc']:>20,}")
    rule = f"dense, smallest depth reaching MoC ({t['iso_flop_rule_layers']} standard)"
    lines.append(f"  {rule:<55} {t['iso_flop_rule']:>20,}")
    r = table["ratios"]
    lines.append(
        f"  MoC / iso-FLOP = {r['moc_over_iso_flop']:.6f}; "
        f"MoC / backbone = {r['moc_over_backbone']:.6f}; "
        f"iso-FLOP / MoC = {t['iso_flop'] / t['moc']:.6f}"
    )
    lines.append("Parameters")
    for key, value in table["parameters"].items():
        lines.append(f"  {key:<55} {value:>20,}")
    return "\n".join(lines)


def load_config(name: str) -> dict:
    """``paper``, ``toy`` or a path to a JSON file with the keys of :data:`PAPER_CONFIG`."""
    if name == "paper":
        return dict(PAPER_CONFIG)
    if name == "toy":
        return dict(TOY_CONFIG)
    try:
        with open(name) as fh:
            cfg = json.load(fh)
    except OSError as exc:
        raise ValueError(f"--config {name!r}: not 'paper', 'toy' or a readable JSON file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"--config {name!r} is not valid JSON: {exc}") from exc
    if not isinstance(cfg, dict):
        raise ValueError(f"--config {name!r} must hold a JSON object")
    return cfg


def _run_cli(args) -> int:
    table = breakdown(load_config(args.config))
    if args.json:
        from theory.cli_support import dumps

        print(dumps(table, indent=2))
    else:
        print(format_breakdown(table))
    return 0


def add_cli(subparsers) -> None:
    """Adds ``python -m theory flops --config paper|toy|FILE [--json]``."""
    p = subparsers.add_parser("flops", help="Mixture of Chapters FLOP/parameter breakdown")
    p.add_argument("--config", default="paper", help="'paper', 'toy' or a JSON file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run_cli)

"""The capacity atlas figure (docs/atlas.md): parameters against information bits, every family a line."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure
from verify.atlas.core import build_atlas
from verify.atlas.sources import FAMILIES

#: distinct colours for up to 20 families (the tab10 colours, then ten named colours)
PALETTE = [
    f"tab:{c}" for c in ("blue", "orange", "green", "red", "purple", "brown", "pink", "gray", "olive", "cyan")
] + [
    "navy",
    "darkgoldenrod",
    "lime",
    "magenta",
    "teal",
    "black",
    "coral",
    "slateblue",
    "yellowgreen",
    "sienna",
]
MARKERS = {"construction": "o", "trained": "^"}


@figure(
    "atlas",
    claims=tuple(dict.fromkeys(f.claim_id for f in FAMILIES)),  # hopfield and hopfield_gated share one claim
    title="Capacity atlas: smallest storing parameters against information bits",
)
def fig_atlas(records):
    """Every family a line through its per-size medians with the band min..max over draws; the
    information limit at 32 bits/parameter [derived] and the ~2 bits/parameter of trained language
    models [reference, Allen-Zhu and Li 2404.05405, not measured here] as lines. Raises LookupError
    (the figure is skipped) when a family's record is missing, unless the family is optional: it is
    then left out of the plot and named as missing in the footer."""
    import matplotlib.pyplot as plt

    quick = {cid: r for cid, r in records.items() if r.get("scale", "quick") == "quick"}
    try:
        table = build_atlas({"quick": quick})
    except ValueError as exc:
        raise LookupError(str(exc)) from None
    fits = {f["family"]: f for f in table["fits"]}
    fig, ax = plt.subplots(figsize=(8.5, 8))
    lo_x, hi_x = np.inf, 0.0
    for i, fam in enumerate(FAMILIES):
        rows = [r for r in table["rows"] if r["family"] == fam.name]
        if not rows:  # an optional family without a stored record: listed in the footer, not drawn
            continue
        x = np.array([r["info_bits"][0] for r in rows])
        med, lo, hi = (np.array([r["params"][j] for r in rows]) for j in range(3))
        xlo, xhi = np.array([r["info_bits"][1] for r in rows]), np.array([r["info_bits"][2] for r in rows])
        order = np.argsort(x)
        color = PALETTE[i % len(PALETTE)]  # 12+ families: the 10-colour cycle would repeat
        fit = fits[fam.name]
        label = (
            f"{fam.name} ({fam.kind}{'' if fam.searched else ', as built'}"
            f"{', I = N log2 N by convention, no information bound' if 'convention' in fam.bound else ''}"
            f"{', I = one-pass bound, not table entropy' if 'table_bits' in rows[0] else ''}"
            "): exponent "
            f"{fit['exponent']:.2f} [{fit['interval95'][0]:.2f}, {fit['interval95'][1]:.2f}]; "
            f"{fam.claim_id}@seed{rows[0]['source']['seed']}"
            + ("" if rows[0]["source"]["status"] == "pass" else f" ({rows[0]['source']['status']})")
        )
        ax.plot(
            x[order],
            med[order],
            "-" if fam.searched else "--",
            marker=MARKERS[fam.kind],
            color=color,
            label=label,
        )
        ax.fill_between(x[order], lo[order], hi[order], color=color, alpha=0.2, lw=0)
        if np.any(xhi > xlo):
            ax.errorbar(x, med, xerr=[x - xlo, xhi - x], fmt="none", ecolor=color, alpha=0.6)
        lo_x, hi_x = min(lo_x, xlo.min()), max(hi_x, xhi.max())
    bits = np.geomspace(lo_x / 2, hi_x * 2, 50)
    ax.plot(
        bits,
        bits / table["information_limit"]["bits_per_param"],
        "k:",
        lw=1.2,
        label="information limit, 32 bits/parameter [derived]: P = I/32",
    )
    ax.plot(
        bits,
        bits / table["reference"]["bits_per_param"],
        "k-",
        lw=1.2,
        alpha=0.6,
        label="~2 bits/parameter, trained LMs (Allen-Zhu & Li 2404.05405) [reference, not measured here]",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("information content of the stored facts I (bits, from theory)")
    ax.set_ylabel("smallest storing size P (parameters)")
    ax.set_title("Capacity atlas: band = min..max over draws;\nexponent of P against I with its 95% interval")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=1)
    ax.grid(True, which="major", alpha=0.3)
    src = sorted({(r["source"]["claim"], str(r["source"]["git"])[:10]) for r in table["rows"]})
    gits = sorted({g for _, g in src})
    ax.text(
        0.99,
        0.01,
        f"recall-bounds, quick scale, stored records at git {', '.join(gits)};\n"
        "per-point sources in results/atlas.json (python -m verify atlas)"
        + "".join(f"\nmissing: {m['family']} (no record of {m['claim']})" for m in table["missing"]),
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=6,
        color="grey",
    )
    return fig

"""The ids of every registered claim, bound and figure, in registration order.

    python tools/registry_snapshot.py            # print
    python tools/registry_snapshot.py --write    # store in tests/registry_ids.txt

``tests/test_registry_ids.py`` compares the registries with the stored list, so a move of files or
a refactor that loses, adds or reorders a claim, bound or figure is noticed.
Regenerate the list (``--write``) only when claims were added or removed on purpose.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORED = ROOT / "tests" / "registry_ids.txt"


def snapshot() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from paper_figs.registry import load_all as load_figures
    from theory.registry import load_all as load_bounds
    from verify.claims import load_all as load_claims

    lines = [f"claim {cid}" for cid in load_claims()]
    lines += [f"bound {name}" for name in load_bounds()]
    lines += [f"figure {fid}" for fid in load_figures()]
    return lines


if __name__ == "__main__":
    text = "\n".join(snapshot()) + "\n"
    if "--write" in sys.argv[1:]:
        STORED.write_text(text)
        print(f"wrote {STORED.relative_to(ROOT)} ({text.count(chr(10))} ids)")
    else:
        sys.stdout.write(text)

"""The geometric area of verify/, one module per concept."""

import importlib

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from verify.geometric.single_hop import (  # noqa: F401
    SRC,
    _rng,
    model_decoding,
)
from verify.geometric.single_hop_setup import code_threshold  # noqa: F401

# the shared-space variants register right after the block-construction claims (their order
# when they were part of single_hop)
importlib.import_module(f"{__name__}.single_hop_variants")

#: Registration order of the claim modules: the order in which they registered when depth,
#: gd_threshold and scaling imported multihop, scaling and single_hop (before their shared parts
#: moved to *_setup modules); kept so that claim ids keep their order.
for _name in ("multihop", "depth", "gd", "scaling", "gd_threshold", "gd_transfer"):
    importlib.import_module(f"{__name__}.{_name}")

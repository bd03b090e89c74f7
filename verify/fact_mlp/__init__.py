"""The fact_mlp area of verify/, one module per concept."""

import importlib

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from verify.fact_mlp.decodability import (  # noqa: F401
    SRC,
    _spherical,
    active_set_rho,
    shared_rho,
)

#: Registration order of the claim modules: the claims of transformer registered before those of
#: edit when edit imported transformer (before the shared parts moved to transformer_setup); the
#: modules before it are imported in their sorted order, so claim ids keep their order.
for _name in ("capacity", "compare", "decoder", "decoder_scaling", "transformer"):
    importlib.import_module(f"{__name__}.{_name}")

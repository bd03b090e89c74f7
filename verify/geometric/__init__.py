"""The geometric area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from verify.geometric.single_hop import (  # noqa: F401
    SRC,
    _rng,
    code_threshold,
    model_decoding,
)

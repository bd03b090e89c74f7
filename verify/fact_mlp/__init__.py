"""The fact_mlp area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from verify.fact_mlp.decodability import (  # noqa: F401
    SRC,
    _spherical,
    active_set_rho,
    shared_rho,
)

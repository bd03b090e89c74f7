"""The geometric area of theory/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from theory.geometric.single_hop import (  # noqa: F401
    require_sufficient_block_dim,
)

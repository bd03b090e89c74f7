"""The hopfield area of paper_figs/, one module per concept."""

# imported first, as the bare module was before the move (registration order); network_dynamics
# held the second half of network before the split, so it comes next
from paper_figs.hopfield import (
    network,  # noqa: F401
    network_dynamics,  # noqa: F401, I001
)

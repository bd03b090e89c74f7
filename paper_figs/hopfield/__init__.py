"""The hopfield area of paper_figs/, one module per concept."""

# imported first, as the bare module was before the move (registration order)
from paper_figs.hopfield import network  # noqa: F401

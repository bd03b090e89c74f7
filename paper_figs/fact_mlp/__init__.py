"""The fact_mlp area of paper_figs/, one module per concept."""

# imported first, as the bare module was before the move (registration order)
from paper_figs.fact_mlp import capacity  # noqa: F401

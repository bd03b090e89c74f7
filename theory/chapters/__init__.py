"""The chapters area of theory/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from theory.chapters.router import (  # noqa: F401
    load_balance_uniform,
    shared_weight,
    zloss_zero_logits,
)

"""The retrieval area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from verify.retrieval.early_gd import (  # noqa: F401
    N_TEST,
)

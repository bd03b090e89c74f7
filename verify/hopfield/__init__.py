"""The hopfield area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order)
from verify.hopfield import ungated  # noqa: F401

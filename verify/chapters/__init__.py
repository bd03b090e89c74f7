"""The chapters area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order)
from verify.chapters import accounting  # noqa: F401

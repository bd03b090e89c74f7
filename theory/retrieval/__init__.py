"""The retrieval area of theory/, one module per concept."""

# imported first, as the bare module was before the move (registration order)
from theory.retrieval import bounds  # noqa: F401

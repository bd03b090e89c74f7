"""The retrieval area of verify/, one module per concept."""

# early_gd is imported first, as the bare module was before the move (registration order), then
# mlp_product (the last claim of early_gd before the split)
from verify.retrieval import early_gd, mlp_product  # noqa: F401

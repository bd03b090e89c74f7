"""The retrieval area of verify/, one module per concept."""

# early_gd is imported first, as the bare module was before the move (registration order), then
# mlp_product (the last claim of early_gd before the split); N_TEST is re-exported for code that
# imported the area as one module
from verify.retrieval import early_gd, mlp_product  # noqa: F401
from verify.retrieval.early_gd_setup import N_TEST  # noqa: F401

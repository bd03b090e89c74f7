"""The geometric area of constructions/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from constructions.geometric.rotation import RotationModel, build_rotation_model  # noqa: F401
from constructions.geometric.single_hop import (  # noqa: F401
    BlockModel,
    attribute_codes,
    block_subject_embeddings,
    build_block_model,
    build_selector,
    check_codes,
    swap_bijections,
)

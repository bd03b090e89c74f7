"""The icrecall area of constructions/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from constructions.icrecall.world import (  # noqa: F401
    Prompts,
    TripletMLP,
    World,
    _strict_argmax,
    direct_recall_accuracy,
    linear_memory,
    make_world,
    sample_direct,
    sample_icrecall,
    triplet_mlp,
)

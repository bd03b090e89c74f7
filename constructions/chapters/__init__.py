"""The chapters area of constructions/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from constructions.chapters.layer import (  # noqa: F401
    ChapterRouter,
    MemoryAttention,
    MemoryLayer,
    auxiliary_losses,
    load_balance_loss,
    normalised_entropy,
    rms_normalise,
    selection_frequency,
    z_loss,
)
from constructions.chapters.model import Block, MoCModel, rope  # noqa: F401

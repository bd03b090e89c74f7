"""The icrecall area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from verify.icrecall.memories import (  # noqa: F401
    DEFAULTS,
    _shuffled_table,
    _world,
)

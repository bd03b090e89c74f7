"""The chapters area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order); router_arith held
# the second half of accounting before the split, so it comes next
from verify.chapters import (
    accounting,  # noqa: F401
    router_arith,  # noqa: F401
)

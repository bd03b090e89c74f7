"""The atlas area of verify/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from verify.atlas.core import (  # noqa: F401
    build_atlas,
    fit_exponent,
    load_records,
    main,
    record_of,
)

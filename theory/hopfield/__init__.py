"""The hopfield area of theory/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from theory.hopfield.reference import (  # noqa: F401
    K_s,
    beta_s,
    capacity,
    capacity_c_symbolic,
    capacity_constants,
    d_s,
    jacobian_norm_bound,
    p_s,
    sphere_radius,
    well_separated_threshold,
)

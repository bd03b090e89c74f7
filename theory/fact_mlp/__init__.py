"""The fact_mlp area of theory/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from theory.fact_mlp.bounds import (  # noqa: F401
    construction_params,
    construction_params_unique,
    gated_mlp_params,
    info_bits,
    jl_code_dim,
    jl_code_dim_delta,
    n_gates,
    pair_failure_bound,
)

# the documented entry point of decodability: `from theory.fact_mlp import decodability`
# gives the function (the module is theory/fact_mlp/rho.py, so no submodule shadows the name)
from theory.fact_mlp.rho import (  # noqa: F401, E402
    Decodability,
    coherence,
    decodability,
    is_feasible,
    rho_lower_bound,
)

"""The hopfield area of constructions/, one module per concept."""

# imported first, as the bare module was before the move (registration order),
# and re-exported for code that imported it as one module
from constructions.hopfield.networks import (  # noqa: F401
    check_beta,
    check_patterns,
    check_state,
    clustered_patterns,
    context_gates,
    energy,
    gated_energy,
    gated_update,
    gaussian_patterns,
    log_gates_from_gates,
    noisy_query,
    retrieval_distribution,
    retrieval_error,
    retrieval_errors_batch,
    sphere_patterns,
    update,
)

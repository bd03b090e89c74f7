"""The fact_mlp area of constructions/, one module per concept."""

# re-exported for code that imported it as one module; facts.py is still imported first, as the
# bare module was before the move (registration order): encoder.py's first import is facts.py
from constructions.fact_mlp.encoder import build_encoder_decoder  # noqa: F401  (the [derived] construction)
from constructions.fact_mlp.facts import (  # noqa: F401
    FactMLP,
    FactSet,
    check_fact_set,
    decode_numpy,
    fact_set,
    feasibility,
    gated_forward,
    interior_value,
    spherical,
    spike,
)
from constructions.fact_mlp.large import build_large  # noqa: E402,F401  (the documented entry point)

"""The hopfield area of verify/, one module per concept."""

# imported in registration order (the order of tests/registry_ids.txt)
from verify.hopfield import ungated  # noqa: F401, I001
from verify.hopfield import separation  # noqa: F401
from verify.hopfield import capacity  # noqa: F401
from verify.hopfield import fixed_point  # noqa: F401
from verify.hopfield import gating  # noqa: F401
from verify.hopfield import lm_pipeline  # noqa: F401
from verify.hopfield import lm  # noqa: F401
from verify.hopfield import lm_probes  # noqa: F401

"""The fact_mlp area of verify/, one module per concept."""

import importlib

#: Registration order of the claim modules: decodability first, as the bare module was before the
#: move; the claims of transformer registered before those of edit when edit imported transformer
#: (before the shared parts moved to transformer_setup); the modules not named are imported after,
#: in their sorted order, so claim ids keep their order.
for _name in ("decodability", "capacity", "compare", "decoder", "decoder_scaling", "transformer"):
    importlib.import_module(f"{__name__}.{_name}")

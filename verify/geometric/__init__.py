"""The geometric area of verify/, one module per concept."""

import importlib

#: Registration order of the claim modules, so that claim ids keep their order: the block-construction
#: claims, their shared-space variants, then the order in which the others registered when depth,
#: gd_threshold and scaling imported multihop, scaling and single_hop (before their shared parts moved
#: to *_setup modules).
for _name in (
    "single_hop",
    "single_hop_variants",
    "multihop",
    "depth",
    "gd",
    "scaling",
    "gd_threshold",
    "gd_transfer",
):
    importlib.import_module(f"{__name__}.{_name}")

"""Explicit weights, task generators and small models (torch). May import ``theory``, never ``verify``.

The stable names (``__all__``) are the builders of the fact-storing models and of their facts,
and the measurement interface they share (:mod:`constructions.measure`): a
:class:`~constructions.geometric.single_hop.BlockModel` and a
:class:`~constructions.fact_mlp.facts.FactMLP` both answer ``decode(facts)``,
``accuracy(facts)`` and ``margins(facts)`` (``FactModel``; ``Facts`` is the type of the facts
argument: a fact set, a relation table or a triple). The names are loaded on first use, so
``import constructions`` does not import torch. Each area's other code lives in its subpackage
(``constructions.hopfield``, ``constructions.retrieval``, ...); see docs/README.md.

>>> import numpy as np, constructions
>>> perms = constructions.make_bijections(10, 3, np.random.default_rng(0))
>>> model = constructions.build_block_model(perms, 8, rng=np.random.default_rng(1))
>>> model.accuracy(perms)
1.0
"""

from __future__ import annotations

import importlib
from typing import Any

#: name -> the module that defines it (imported on first access)
_EXPORTS = {
    # the shared measurement interface
    "FactModel": "constructions.measure",
    "Facts": "constructions.measure",
    "fact_targets": "constructions.measure",
    "describe_fact": "constructions.measure",
    # facts: bijections (geometric) and fact sets (fact_mlp)
    "make_bijections": "constructions.tasks",
    "check_bijections": "constructions.tasks",
    "single_hop_dataset": "constructions.tasks",
    "FactSet": "constructions.fact_mlp.facts",
    "fact_set": "constructions.fact_mlp.facts",
    # the geometric block model
    "BlockModel": "constructions.geometric.single_hop",
    "attribute_codes": "constructions.geometric.single_hop",
    "build_block_model": "constructions.geometric.single_hop",
    "swap_bijections": "constructions.geometric.single_hop",
    # the fact-storing MLPs
    "FactMLP": "constructions.fact_mlp.facts",
    "build_encoder_decoder": "constructions.fact_mlp.encoder",
    "LargeFactMLP": "constructions.fact_mlp.large",
    "build_large": "constructions.fact_mlp.large",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules on first access (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

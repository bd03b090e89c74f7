"""The blocked scoring of direct_recall's shuffled-table control gives the accuracy of
the one-shot formula it replaced, whatever the block size."""

import numpy as np
import pytest

from constructions.icrecall.world import sample_direct, triplet_mlp
from verify.claims import rng_for
from verify.icrecall.handset_setup import DEFAULTS, _world
from verify.icrecall.memories import _accuracy_against, _shuffled_table


@pytest.mark.parametrize("seed, max_elements", [(0, 1), (1, 1000), (2, 12345), (3, 1 << 24)])
def test_blocked_shuffled_accuracy_equals_one_shot(seed, max_elements):
    p = dict(DEFAULTS, n_subj=60, dim=24)
    world = _world(p, seed)
    s, r, _ = sample_direct(world, 300, rng_for(seed, 17))
    mlp = triplet_mlp(_shuffled_table(world, rng_for(seed, 18)), p["theta"])
    z = world.subj[s] + world.rel[r]
    one_shot = float(np.mean((mlp(z) @ world.unemb.T).argmax(axis=1) == world.answer[s, r]))
    assert _accuracy_against(world, mlp, s, r, max_elements) == one_shot
    assert 0.0 < one_shot < 0.5  # the control scores near chance: the comparison is not vacuous

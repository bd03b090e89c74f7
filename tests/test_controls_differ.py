"""No control reproduces its claim's own computation (README.md, "Kinds of claim, controls and
verdicts over seeds"): a control is where the criterion must fail, so it has to compute something
the claim does not.

Two ways a control can fail that: its override leaves the claim's parameters as they are (checked
for every claim at both scales, without running anything), or, when run, it reads one of the
claim's own shared results (``ctx.shared``) in place of another, i.e. two of the claim's
computations become one (an arm recomputes the other arm, and the measured difference is 0 by
construction). The second is read from the quick records the registry test makes
(``quick_record``, ``claim_reads`` in tests/conftest.py), so it costs nothing in the suite.
"""

from collections import Counter

import pytest

from verify.claims import load_all

CLAIMS = load_all()
WITH_CONTROLS = [cid for cid, c in CLAIMS.items() if c.controls]


#: Shared results that are loaded inputs, not an arm's computation: a pretrained language model
#: read from disk (``load_lm``, verify/hopfield/lm_setup.py). The random-weights controls
#: of the override probes read it twice, once as the model whose known facts are probed and once
#: as the architecture of the seeded random twin (load_lm reads the real model to build it):
#: the twin's measurements are their own shared results, so no arm stands in for another.
LOADED_INPUTS = ("verify.hopfield.lm_setup.load_lm",)


def collapsed(own: Counter, control: Counter) -> list:
    """The shared results a control reads more often than the claim's own check does, among those
    the claim reads: each such extra read stands where the claim made a different computation.
    Keys whose first element names a loaded input (:data:`LOADED_INPUTS`) are not computations and
    are left out.

    >>> collapsed(Counter({"with": 1, "without": 1}), Counter({"with": 2}))
    ['with']
    >>> collapsed(Counter({"with": 1, "without": 1}), Counter({"with": 1, "other": 1}))
    []
    >>> model = ("verify.hopfield.lm_setup.load_lm", (("spec", "m"), ("random_weights", False)), 0)
    >>> collapsed(Counter({model: 1, "real": 1}), Counter({model: 2, "twin": 1}))
    []
    """
    return [
        key
        for key, n in control.items()
        if 0 < own.get(key, 0) < n and not (isinstance(key, tuple) and key and key[0] in LOADED_INPUTS)
    ]


@pytest.mark.parametrize("scale", ["quick", "full"])
def test_every_control_changes_the_claims_parameters(scale):
    same = []
    for cid in WITH_CONTROLS:
        claim = CLAIMS[cid]
        params = claim.params(scale)
        same += [f"{cid}/{c.name}" for c in claim.controls if c.apply(params) == params]
    assert not same, f"controls whose resolved parameters equal their claim's at {scale} scale: {same}"


@pytest.mark.parametrize("claim_id", WITH_CONTROLS)
def test_no_control_reads_the_claims_own_arm_twice(claim_id, quick_record, claim_reads):
    record = quick_record(claim_id)
    if record["status"] == "skipped":
        pytest.skip(f"{claim_id}: {record['skipped']}")
    reads = claim_reads[claim_id]
    names = [c.name for c in CLAIMS[claim_id].controls]
    assert len(reads) == 1 + len(names), f"{claim_id}: {len(reads)} checks read, {names}"
    bad = {name: collapsed(reads[0], r) for name, r in zip(names, reads[1:]) if collapsed(reads[0], r)}
    assert not bad, (
        f"{claim_id}: these controls read one of the claim's own shared results in place of "
        f"another (two of its computations become one): {bad}"
    )

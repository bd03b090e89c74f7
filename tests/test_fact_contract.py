"""check_fact_model on models from outside the toolkit (docs/testing.md): one tie rule for every
contract (a rounding-level tie is an error whichever way rounding falls, through any wrapper),
torch modules and callables checked without a hand-written adapter, bits per parameter read from
the model's dtype, and ``stores`` beside ``ok`` (a model that loses one fact of 256 is not ok)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from constructions.decode import TIE_ULPS, decode_logits, kernel_tolerances, tie_tolerance
from constructions.fact_mlp import build_encoder_decoder, fact_set
from constructions.tasks import make_bijections
from verify.fact_check import ModuleFactModel, check_fact_model

N = 256
PERMS = make_bijections(N, 1, np.random.default_rng(0))  # one relation: 256 facts (s, 0) -> pi(s)
TIED = 17  # the fact whose target ties with another candidate


def planted_logits(
    direction: int, dtype=np.float64, scale: float = 1.0, gap: float | None = None
) -> np.ndarray:
    """Logits (N, N) that store every fact with margin >= 0.5, except fact TIED: its target's
    logit and another candidate's are equal up to rounding, the other one ulp above (direction +1)
    or half an ulp below (-1), or ``gap`` (relative) below when given."""
    logits = np.random.default_rng(1).uniform(-1.0, 0.5, (N, N)) * scale
    logits[np.arange(N), PERMS[0]] = scale
    other = (PERMS[0, TIED] + 1) % N
    if gap is not None:
        logits[TIED, other] = scale * (1.0 - gap)
    else:
        one = dtype(scale)
        logits[TIED, other] = np.nextafter(one, one * 2 if direction > 0 else one * 0, dtype=dtype)
    return logits.astype(dtype)


class LogitTable(torch.nn.Module):
    """A torch module holding the logits of every fact: row s for the pair (s, 0)."""

    def __init__(self, logits: np.ndarray):
        super().__init__()
        self.logits = torch.nn.Parameter(torch.as_tensor(logits))
        self.seen: list[torch.Tensor] = []

    def forward(self, pairs: torch.Tensor) -> torch.Tensor:
        self.seen.append(pairs)
        return self.logits[pairs[:, 0] * PERMS.shape[0] + pairs[:, 1]]


class NaiveWrapper:
    """The hand-written adapter a user writes first: argmax decode (no tie rule), raw margins, the
    accuracy of its own decode. Its logits are read from ``logits``."""

    def __init__(self, logits: np.ndarray):
        self.logits = logits
        self.params_unique = logits.size

    def decode(self, perms):
        return self.logits.argmax(axis=1)

    def margins(self, perms):
        z = self.logits.astype(np.float64)
        target = perms[0]
        correct = z[np.arange(N), target].copy()
        z[np.arange(N), target] = -np.inf
        return correct - z.max(axis=1)

    def accuracy(self, perms):
        return float(np.mean(self.decode(perms) == perms[0]))


# --- 1. one tie rule: a rounding-level tie is an error through every wrapper ---------------------
@pytest.mark.parametrize("direction", [+1, -1])
def test_a_rounding_level_tie_is_an_error_through_two_wrappers(direction):
    logits = planted_logits(direction)
    margin = logits[TIED, PERMS[0, TIED]] - np.sort(logits[TIED])[-2 if direction < 0 else -1]
    assert 0 < abs(margin) < 1e-15  # rounding decides the sign: +1.1e-16 or -2.2e-16
    module = check_fact_model(LogitTable(logits), PERMS, raise_on_failure=False)
    table = logits  # the same logits through a numpy callable (no parameters: n_params given)
    function = check_fact_model(
        lambda pairs: table[pairs[:, 0]], PERMS, n_params=N * N, raise_on_failure=False
    )
    for report in (module, function):
        assert report.problems == [] and report.contracts_kept
        assert (report.n_stored, report.n_facts, report.stores, report.ok) == (N - 1, N, False, False)
        assert report.accuracy == report.reported_accuracy == (N - 1) / N
        assert report.tie_source == "the model's tie_tolerances(facts)"
    assert module.tie_tolerance == function.tie_tolerance == pytest.approx(TIE_ULPS * 2.0**-52)
    with pytest.raises(AssertionError, match=rf"stores {N - 1} of {N} facts: fact {TIED} \(subject {TIED}, "):
        check_fact_model(LogitTable(logits), PERMS)

    # a hand-written wrapper without the tie rule: the same verdict on the fact and the same
    # accuracy; when rounding decodes the tie to its value, the check says which contract it breaks
    naive = check_fact_model(NaiveWrapper(logits), PERMS, raise_on_failure=False)
    assert (naive.n_stored, naive.accuracy, naive.stores, naive.ok) == (N - 1, (N - 1) / N, False, False)
    if margin > 0:
        assert naive.reported_accuracy == 1.0
        assert [p.split(":")[0] for p in naive.problems] == [
            "ties count as errors",
            "accuracy 1 with a tie is impossible",
        ]
        assert f"fact {TIED} (subject {TIED}, relation 0)" in naive.problems[0]
    else:
        assert naive.problems == [] and naive.reported_accuracy == (N - 1) / N


def test_the_decisions_of_decode_logits_follow_the_tie_rule():
    for direction in (+1, -1):
        res = decode_logits(planted_logits(direction), PERMS[0])
        stored = res.margins > res.tolerances
        assert np.array_equal(res.decoded == PERMS[0], stored)
        assert np.flatnonzero(~stored).tolist() == [TIED] and res.decoded[TIED] == -1


def test_the_tolerance_scales_with_the_dtype_and_the_logits_magnitude():
    # a relative gap of 1e-6: rounding-level in float32 (64 ulps = 7.6e-6), a stored fact in float64
    gap32 = check_fact_model(
        LogitTable(planted_logits(0, np.float32, gap=1e-6)), PERMS, raise_on_failure=False
    )
    gap64 = check_fact_model(LogitTable(planted_logits(0, np.float64, gap=1e-6)), PERMS)
    assert (gap32.n_stored, gap32.problems) == (N - 1, []) and gap64.stores
    assert gap32.tie_tolerance == pytest.approx(TIE_ULPS * 2.0**-23)
    # a gap of 1e-9 absolute is stored among logits of magnitude 1 and a tie among logits of 1e6
    small = check_fact_model(LogitTable(planted_logits(0, gap=1e-9)), PERMS)
    large = check_fact_model(
        LogitTable(planted_logits(0, scale=1e6, gap=1e-15)), PERMS, raise_on_failure=False
    )
    assert small.stores and not large.stores and large.problems == []
    assert large.tie_tolerance == pytest.approx(tie_tolerance(1e6, np.float64))
    # margin_atol replaces the rule by one absolute tolerance, for every contract
    atol = check_fact_model(
        LogitTable(planted_logits(0, gap=1e-9)), PERMS, margin_atol=1e-6, raise_on_failure=False
    )
    assert atol.n_stored == N - 1 and atol.tie_source == "margin_atol=1e-06 (given)"


def test_the_toolkits_models_are_judged_with_the_kernels_own_tolerances():
    facts = fact_set(30, 6, 12, np.random.default_rng(0))
    mlp = build_encoder_decoder(facts, 12, np.random.default_rng(1))
    report = check_fact_model(mlp, facts)
    expected = kernel_tolerances(mlp.forward(facts.keys), facts.values)
    assert report.tie_tolerance == expected.max()
    assert report.tie_source.startswith("the decode kernel's")


def test_a_model_with_its_own_tolerances_is_judged_by_them():
    logits = planted_logits(0, gap=1e-9)
    wrapper = NaiveWrapper(logits)
    assert check_fact_model(wrapper, PERMS).stores  # logits of magnitude 1 assumed: 1e-9 is stored
    wrapper.tie_tolerances = lambda perms: np.full(N, 1e-6)
    report = check_fact_model(wrapper, PERMS, raise_on_failure=False)
    assert report.tie_source == "the model's tie_tolerances(facts)" and report.n_stored == N - 1
    assert report.problems[0].startswith("ties count as errors: 1 facts")
    wrapper.tie_tolerances = lambda perms: np.zeros(3)
    report = check_fact_model(wrapper, PERMS, raise_on_failure=False)
    assert (
        "tie_tolerances must give one number >= 0 per fact, shape (256,); got shape (3,)" in report.problems
    )


# --- 2. torch modules and callables without a hand-written adapter -------------------------------
def test_a_torch_module_over_subject_relation_pairs_is_checked_as_it_is():
    perms = make_bijections(12, 3, np.random.default_rng(2))  # 36 facts, subject major

    class Lookup(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.answer = torch.nn.Embedding(12 * 3, 12, dtype=torch.float64)
            with torch.no_grad():
                self.answer.weight.zero_()
                self.answer.weight[
                    np.arange(12).repeat(3) * 3 + np.tile(np.arange(3), 12), perms.T.ravel()
                ] = 1

        def forward(self, pairs):
            assert pairs.dtype == torch.int64 and pairs.shape[1] == 2
            return self.answer(pairs[:, 0] * 3 + pairs[:, 1])

    report = check_fact_model(Lookup(), perms)
    assert report.ok and report.n_params == 36 * 12 and report.accuracy == 1.0
    assert report.bits_per_param == 64 and report.bits_source == "float64: the torch module's parameters"
    triple = (np.array([0, 5]), np.array([2, 1]), perms[[2, 1], [0, 5]])  # two of its facts
    assert check_fact_model(Lookup(), triple).n_facts == 2


def test_a_torch_module_over_keys_is_checked_as_it_is():
    facts = fact_set(40, 8, 16, np.random.default_rng(0))
    mlp = build_encoder_decoder(facts, 16, np.random.default_rng(1))
    gated = mlp.torch_module(dtype=torch.float32)
    values = torch.as_tensor(facts.values, dtype=torch.float32)

    class Logits(torch.nn.Module):  # keys -> logits over the 8 values
        def __init__(self):
            super().__init__()
            self.mlp = gated

        def forward(self, keys):
            assert keys.dtype == torch.float32  # the keys come in the module's dtype
            return self.mlp(keys) @ values.T

    report = check_fact_model(Logits(), facts)
    assert report.ok and report.n_params == mlp.params_standard and report.bits_per_param == 32
    # a module with outputs in value space: decoded against the values by the decode kernel
    values_report = check_fact_model(ModuleFactModel(gated, output="values"), facts)
    assert values_report.ok and values_report.n_params == mlp.params_standard
    with pytest.raises(
        TypeError, match=r"ModuleFactModel\(module, output='values'\)\); got shape \(40, 16\)"
    ):
        check_fact_model(gated, facts)


def test_a_module_that_does_not_fit_is_a_type_error_naming_the_convention():
    pairs_convention = (
        r"the module must map a batch of B \(subject, relation\) index pairs, shape \(B, 2\) \(int64: "
        r"a torch tensor for a torch module, a numpy array for another callable\), to logits over the "
        r"256 candidates, shape \(B, 256\)"
    )
    with pytest.raises(
        TypeError, match=pairs_convention + r"; got shape \(256, 3\) for a batch of shape \(256, 2\)"
    ):
        check_fact_model(lambda pairs: np.zeros((len(pairs), 3)), PERMS)
    with pytest.raises(TypeError, match=pairs_convention + r"; got shape \(256,\)"):
        check_fact_model(lambda pairs: np.zeros(len(pairs)), PERMS)
    with pytest.raises(
        TypeError, match=pairs_convention + r"; calling it on a batch of shape \(256, 2\) failed: "
    ):
        check_fact_model(torch.nn.Linear(4, 256), PERMS)
    with pytest.raises(ValueError, match="output='values' needs facts that are a FactSet"):
        check_fact_model(ModuleFactModel(lambda x: x, output="values"), PERMS)
    with pytest.raises(ValueError, match="output='scores' must be 'logits'"):
        ModuleFactModel(lambda x: x, output="scores")
    with pytest.raises(TypeError, match="module must be a torch module or a callable"):
        ModuleFactModel(np.zeros(3))


def test_the_module_runs_once_per_check_in_batches():
    module = LogitTable(planted_logits(0, gap=0.5))
    check_fact_model(ModuleFactModel(module, batch_size=100), PERMS)
    assert [len(p) for p in module.seen] == [100, 100, 56]  # decode, margins, accuracy: one pass
    adapter = ModuleFactModel(module)  # outside a check, every call runs the module (no stale answers)
    assert adapter.accuracy(PERMS) == 1.0
    with torch.no_grad():
        module.logits[TIED] = -module.logits[TIED]
    assert adapter.accuracy(PERMS) == (N - 1) / N and adapter.decode(PERMS)[TIED] != PERMS[0, TIED]


# --- 3. bits per parameter from the model's dtype --------------------------------------------------
@pytest.mark.parametrize(
    ("dtype", "bits"),
    [(torch.float64, 64), (torch.float32, 32), (torch.float16, 16), (torch.bfloat16, 16)],
)
def test_a_torch_model_is_judged_at_the_bits_of_its_dtype(dtype, bits):
    one_hot = torch.full((N, N), -1.0, dtype=dtype)  # margin 2: clears even bfloat16's tolerance
    one_hot[np.arange(N), PERMS[0]] = 1.0
    report = check_fact_model(LogitTable(one_hot), PERMS)
    name = str(dtype).removeprefix("torch.")
    assert report.bits_per_param == bits and report.bits_source == f"{name}: the torch module's parameters"
    assert report.ratio == pytest.approx(N * N * bits / report.bound)
    assert report.tie_tolerance == tie_tolerance(1.0, dtype)
    given = check_fact_model(LogitTable(one_hot), PERMS, bits_per_param=8)
    assert given.bits_per_param == 8 and given.bits_source == "given (bits_per_param=8)"
    assert given.ratio == pytest.approx(report.ratio * 8 / bits)


@pytest.mark.parametrize(("dtype", "bits"), [(np.float32, 32), (np.float64, 64)])
def test_a_numpy_model_is_judged_at_the_bits_of_its_arrays(dtype, bits):
    wrapper = NaiveWrapper(planted_logits(0, gap=0.5).astype(dtype))
    report = check_fact_model(wrapper, PERMS)
    assert report.bits_per_param == bits
    assert report.bits_source == f"{np.dtype(dtype).name}: the model's floating-point arrays"
    assert check_fact_model(wrapper, PERMS, bits_per_param=64).bits_per_param == 64  # given wins


def test_a_model_of_several_dtypes_or_none_is_judged_as_said():
    class Mixed(NaiveWrapper):
        def __init__(self, logits):
            super().__init__(logits.astype(np.float32))
            self.bias = np.zeros(N * N)  # float64, as many numbers as the float32 table

    report = check_fact_model(Mixed(planted_logits(0, gap=0.5)), PERMS)
    assert report.bits_per_param == 48 and "65536 float32 and 65536 float64 numbers" in report.bits_source

    class Declared(NaiveWrapper):
        dtype = np.float16

    declared = check_fact_model(Declared(planted_logits(0, gap=0.5)), PERMS)
    assert declared.bits_per_param == 16 and declared.bits_source == "float16: the model's dtype attribute"
    bare = check_fact_model(
        lambda pairs: np.eye(N)[PERMS[0, pairs[:, 0]]].astype(np.float32), PERMS, n_params=N * N
    )
    assert bare.bits_per_param == 32 and "the dtype of the callable's logits" in bare.bits_source


# --- 4. stores beside ok ----------------------------------------------------------------------------
def test_a_model_that_loses_one_fact_of_256_is_not_ok():
    logits = planted_logits(0, gap=0.5)
    logits[TIED] = np.roll(logits[TIED], 1)  # fact TIED now decodes to another subject
    report = check_fact_model(LogitTable(logits), PERMS, raise_on_failure=False)
    assert report.contracts_kept and report.problems == []
    assert (report.n_stored, report.n_facts, report.stores, report.ok) == (255, 256, False, False)
    assert report.accuracy == 255 / 256
    with pytest.raises(AssertionError, match=rf"^the fact model stores 255 of 256 facts: fact {TIED} \("):
        check_fact_model(LogitTable(logits), PERMS)
    whole = check_fact_model(LogitTable(planted_logits(0, gap=0.5)), PERMS)
    assert (whole.n_stored, whole.stores, whole.ok) == (256, True, True)

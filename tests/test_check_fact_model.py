"""verify.testing.check_fact_model: the toolkit's own fact models keep every contract (and are ok
exactly when they store every fact), and models broken on purpose (ties decoded to their value, a misreported accuracy, positive margins on wrong
decodes, a parameter count below the information bound) are each caught. An object without the
three methods, facts of another form (text) and a bit width, count or tolerance out of range
(NaN) are refused before the model is asked anything, naming what is wrong."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from constructions import build_block_model, make_bijections
from constructions.fact_mlp import FactSet, build_encoder_decoder, fact_set
from constructions.fact_mlp.baselines import hebbian_readout, linear_memory, ntk_memory
from theory.fact_mlp.bounds import info_bits, info_bits_tied
from verify.fact_check import BITS_PER_PARAM, FactModelReport
from verify.testing import check_fact_model


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


FACTS = fact_set(30, 6, 12, rng(0))


class Wrapper:
    """A fact model that forwards to ``inner``; subclasses break one contract each."""

    def __init__(self, inner, n_params: int | None = None):
        self.inner = inner
        self.params_unique = inner.params_unique if n_params is None else n_params

    def decode(self, facts):
        return self.inner.decode(facts)

    def accuracy(self, facts):
        return self.inner.accuracy(facts)

    def margins(self, facts):
        return self.inner.margins(facts)


class BreaksTiesTowardTheTarget(Wrapper):
    def decode(self, facts):
        decoded = np.asarray(self.inner.decode(facts)).copy()
        ties = decoded == -1
        decoded[ties] = facts.fact_map[ties]
        return decoded

    def accuracy(self, facts):  # consistent with its decode: only the tie rule is broken
        return float(np.mean(self.decode(facts) == facts.fact_map))


class MisreportsAccuracy(Wrapper):
    def accuracy(self, facts):
        return 1.0


class CountsTiesAsCorrect(Wrapper):
    def accuracy(self, facts):
        decoded = np.asarray(self.inner.decode(facts))
        return float(np.mean((decoded == facts.fact_map) | (decoded == -1)))


class PositiveMarginsOnWrongDecodes(Wrapper):
    def margins(self, facts):
        return np.abs(self.inner.margins(facts)) + 0.5


class DecodesOutOfRange(Wrapper):
    def decode(self, facts):
        return np.asarray(self.inner.decode(facts)) + facts.n_values


def tied_model() -> tuple[FactSet, object]:
    """An encoder-decoder checked on its facts with value 0 listed twice: the facts of value 0 are
    exact ties (margin 0, decoded -1)."""
    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    facts = FactSet(FACTS.keys, np.vstack([FACTS.values, FACTS.values[:1]]), FACTS.fact_map)
    assert (mlp.decode(facts) == -1).any() and (mlp.margins(facts) == 0).any()
    return facts, mlp


def wrong_model() -> tuple[FactSet, object]:
    """An encoder-decoder checked on a fact set with another map: accuracy below 1."""
    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    other = FactSet(FACTS.keys, FACTS.values, (FACTS.fact_map + np.arange(30) % 2) % 6)
    return other, mlp


# --- the toolkit's constructions pass -------------------------------------------------------------
GOOD = {
    "encoder_decoder": lambda: (FACTS, build_encoder_decoder(FACTS, 12, rng(1))),
    "encoder_decoder_orthogonal": lambda: (FACTS, build_encoder_decoder(FACTS, 12, rng(1), orthogonal=True)),
    "encoder_decoder_tied": lambda: (
        (f := fact_set(16, 16, 16, rng(2), tied=True)),
        build_encoder_decoder(f, 16, rng(3)),
    ),
    "encoder_decoder_with_ties": tied_model,
    "encoder_decoder_on_other_facts": wrong_model,
    "linear_memory": lambda: (FACTS, linear_memory(FACTS)),
    "ntk_memory": lambda: (FACTS, ntk_memory(FACTS, 32, rng(1))),
    "hebbian_readout": lambda: (FACTS, hebbian_readout(FACTS, 32, rng(1), whitened=True)),
    "block_model": lambda: (
        (p := make_bijections(20, 3, rng(0))),
        build_block_model(p, 8, rng=rng(1)),
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", list(GOOD))
def test_the_toolkits_fact_models_keep_every_contract(name):
    facts, model = GOOD[name]()
    report = check_fact_model(model, facts, raise_on_failure=False)
    assert isinstance(report, FactModelReport) and report.contracts_kept and report.problems == []
    stores = model.accuracy(facts) == 1.0  # some (ties, other facts, the baselines) lose facts
    assert report.stores == stores and report.ok == stores
    assert report.n_stored == round(model.accuracy(facts) * report.n_facts)
    assert report.tie_source.startswith("the decode kernel's")  # the kernel's own tolerances
    if stores:
        assert check_fact_model(model, facts) == report
    else:
        with pytest.raises(AssertionError, match=rf"^the fact model stores {report.n_stored} of "):
            check_fact_model(model, facts)
    assert report.accuracy == model.accuracy(facts) == report.reported_accuracy
    assert report.min_margin == float(np.min(model.margins(facts)))
    assert report.n_params is not None and report.ratio is not None and report.ratio > 1


def test_the_model_own_facts_are_the_default():
    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    assert check_fact_model(mlp) == check_fact_model(mlp, FACTS)


def test_the_bound_is_the_information_bound_of_the_facts():
    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    report = check_fact_model(mlp, FACTS)
    assert report.bound == pytest.approx(info_bits(30, 6))
    assert report.n_params == mlp.params_unique
    assert report.ratio == pytest.approx(mlp.params_unique * BITS_PER_PARAM / info_bits(30, 6))
    assert check_fact_model(mlp, FACTS, bits_per_param=32).ratio == pytest.approx(report.ratio / 2)
    tied = fact_set(16, 16, 16, rng(2), tied=True)  # a bijection: log2 F! bits
    assert check_fact_model(build_encoder_decoder(tied, 16, rng(3)), tied).bound == pytest.approx(
        info_bits_tied(16)
    )
    perms = make_bijections(20, 3, rng(0))  # R bijections of [N]: R log2 N! bits
    block = check_fact_model(build_block_model(perms, 8, rng=rng(1)), perms)
    assert block.bound == pytest.approx(3 * info_bits_tied(20))


# --- models broken on purpose are caught -----------------------------------------------------------
BROKEN = {
    "breaks ties toward the target": (tied_model, BreaksTiesTowardTheTarget, "ties count as errors"),
    "accuracy 1 with a tie": (tied_model, BreaksTiesTowardTheTarget, "accuracy 1 with a tie is impossible"),
    "misreports its accuracy": (wrong_model, MisreportsAccuracy, "accuracy reports 1 but the mean"),
    "counts ties as correct": (tied_model, CountsTiesAsCorrect, "accuracy reports 1 but the mean"),
    "positive margin, wrong decode": (wrong_model, PositiveMarginsOnWrongDecodes, "a positive margin means a stored fact"),
    "positive minimum margin, accuracy < 1": (wrong_model, PositiveMarginsOnWrongDecodes, "implies accuracy 1"),
    "decodes out of range": (lambda: (FACTS, build_encoder_decoder(FACTS, 12, rng(1))), DecodesOutOfRange, "outside"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_model_is_caught(name):
    make, wrap, message = BROKEN[name]
    facts, inner = make()
    assert check_fact_model(inner, facts, raise_on_failure=False).contracts_kept  # the model it wraps
    broken = wrap(inner)
    with pytest.raises(AssertionError, match=message):
        check_fact_model(broken, facts)
    report = check_fact_model(broken, facts, raise_on_failure=False)
    assert not report.ok and any(message in p for p in report.problems)


def test_too_few_parameters_for_the_facts_is_caught():
    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    needed = info_bits(30, 6) / BITS_PER_PARAM  # 77.5 bits / 64: 2 parameters are enough
    with pytest.raises(AssertionError, match=r"below the .* bits the facts carry .*ratio 0\.99"):
        check_fact_model(Wrapper(mlp, n_params=1), FACTS, bits_per_param=info_bits(30, 6) * 0.99)
    report = check_fact_model(Wrapper(mlp, n_params=1), FACTS, raise_on_failure=False)
    assert report.ratio == pytest.approx(1 / needed) and report.ratio < 1 and not report.ok
    assert check_fact_model(Wrapper(mlp, n_params=math.ceil(needed)), FACTS).ok


def test_a_model_without_a_parameter_count_needs_one():
    class Bare(Wrapper):
        def __init__(self, inner):
            self.inner = inner

    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    with pytest.raises(AssertionError, match="no parameter count"):
        check_fact_model(Bare(mlp), FACTS)
    assert check_fact_model(Bare(mlp), FACTS, n_params=mlp.params_unique).ok


def test_every_broken_contract_is_listed():
    facts, inner = tied_model()
    report = check_fact_model(
        CountsTiesAsCorrect(BreaksTiesTowardTheTarget(inner)), facts, raise_on_failure=False
    )
    assert len(report.problems) >= 2
    with pytest.raises(AssertionError, match=rf"breaks {len(report.problems)} contracts"):
        check_fact_model(CountsTiesAsCorrect(BreaksTiesTowardTheTarget(inner)), facts)


# --- inputs that are not a model, facts or a bit width are refused naming them ---------------------
def test_an_object_without_the_three_methods_is_a_type_error_naming_them():
    interface = r"model must be a fact-storing model with the methods decode\(facts\), accuracy\(facts\) and margins\(facts\)"
    with pytest.raises(TypeError, match=interface + r".*; object has none of them"):
        check_fact_model(object(), FACTS)
    with pytest.raises(TypeError, match=interface + r".*; object has none of them"):
        check_fact_model(object())  # before the facts are looked for

    class DecodesOnly:
        def decode(self, facts):
            return np.zeros(len(facts.fact_map), dtype=np.int64)

    with pytest.raises(TypeError, match=r"DecodesOnly lacks accuracy, margins"):
        check_fact_model(DecodesOnly(), FACTS)


@pytest.mark.parametrize("facts", ["facts", {"keys": 1}, [["a", "b"], ["c", "d"]]])
def test_facts_of_another_form_are_a_type_error_naming_the_forms(facts):
    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    with pytest.raises(
        TypeError,
        match=r"facts must be a FactSet, a relation table \(an int array of shape \(R, N\)\) or a "
        rf"triple \(subjects, relations, targets\) of int arrays; got {type(facts).__name__} ",
    ):
        check_fact_model(mlp, facts)


@pytest.mark.parametrize(
    ("name", "value", "error", "message"),
    [
        ("bits_per_param", math.nan, ValueError, "bits_per_param=nan must be a positive finite number"),
        ("bits_per_param", math.inf, ValueError, "bits_per_param=inf must be a positive finite number"),
        ("bits_per_param", 0, ValueError, "bits_per_param=0 must be a positive finite number"),
        ("bits_per_param", "64", TypeError, "bits_per_param='64' must be a positive finite number"),
        ("margin_atol", math.nan, ValueError, "margin_atol=nan must be a finite number >= 0"),
        ("n_params", 2.5, ValueError, "n_params=2.5 must be an integer"),
        ("n_params", -1, ValueError, "n_params=-1 violates the hypothesis n_params >= 0"),
    ],
)
def test_a_bit_width_count_or_tolerance_out_of_range_is_refused_naming_it(name, value, error, message):
    mlp = build_encoder_decoder(FACTS, 12, rng(1))
    with pytest.raises(error, match=re.escape(message)):
        check_fact_model(mlp, FACTS, **{name: value})
    with pytest.raises(error, match=re.escape(message)):  # not a report with a NaN ratio either
        check_fact_model(mlp, FACTS, raise_on_failure=False, **{name: value})

"""The shared trainings whose verdicts sat near their thresholds run on one intra-op thread, so a
record does not depend on the machine's thread count (docs/performance.md)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from verify.claims import CLAIMS, Context, load_all  # noqa: E402


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_the_geometric_gd_training_runs_on_one_thread(monkeypatch, two_threads):
    import verify.geometric.gd_setup as setup

    seen = []
    monkeypatch.setattr(setup, "train_model", lambda *a, **k: seen.append(torch.get_num_threads()) or "model")
    load_all()
    p = CLAIMS["geometric.gd.intervention"].params("quick")
    assert setup.trained(p, Context(scale="quick"), 0) == "model"
    assert seen == [1] and torch.get_num_threads() == 2  # the caller's setting is restored


def test_the_chapters_toy_trainings_run_on_one_thread(monkeypatch, two_threads):
    import constructions.chapters.train as train
    from verify.chapters.toy_setup import phase2

    seen = []

    def spy(model, batches, steps, **kw):
        seen.append(torch.get_num_threads())
        return {"acc": [[0.5]], "eval_loss": [[1.0]]}

    monkeypatch.setattr(train, "train", spy)
    monkeypatch.setattr(train, "evaluate", lambda model, data, device: (0.0, 1.0))
    load_all()
    p = CLAIMS["chapters.toy.frozen_bank_parity"].params("quick")
    phase2(p, Context(scale="quick"), 0, "moc", "frozen")
    assert seen == [1, 1] and torch.get_num_threads() == 2  # phase 1, then phase 2

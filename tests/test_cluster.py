"""Claims on a Dask cluster (verify/cluster.py): `verify run ... --scheduler` and
`verify.run_claims(..., scheduler=)` give the statuses of a local run, one writer appends the
records, and a re-run resumes from them."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed")

FAST = [
    "chapters.router.zloss_zero_logits",
    "chapters.router.mixing_weights",
    "geometric.single_hop.selector_exact",
]


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        yield lc


def test_a_cluster_run_gives_the_statuses_of_a_local_run_and_resumes(cluster, tmp_path):
    import json

    import verify

    local = {r["id"]: r for r in verify.run_claims(FAST)}
    remote = {
        r["id"]: r for r in verify.run_claims(FAST, results=tmp_path, scheduler=cluster.scheduler_address)
    }
    assert {k: r["status"] for k, r in remote.items()} == {k: r["status"] for k, r in local.items()}
    assert {k: r["measured"] for k, r in remote.items()} == {
        k: json.loads(json.dumps(r["measured"])) for k, r in local.items()
    }
    stored = [json.loads(line) for line in (tmp_path / "claims.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in stored) == sorted(FAST)  # one writer, one record per claim
    again = verify.run_claims(FAST, results=tmp_path, scheduler=cluster.scheduler_address)
    assert all(r.get("resumed") for r in again)  # nothing submitted again


def test_the_command_line_takes_a_scheduler(cluster, tmp_path, capsys):
    from verify.cli import main

    code = main(
        ["run", *FAST[:2], "--out", str(tmp_path), "--scheduler", cluster.scheduler_address, "--json"]
    )
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "claims.jsonl").read_text().count("\n") == 2


def test_an_address_nobody_answers_is_a_clear_error(monkeypatch):
    import verify
    import verify.cluster

    monkeypatch.setattr(verify.cluster, "CONNECT_TIMEOUT", "2s")
    with pytest.raises(ValueError, match="no Dask scheduler answers at tcp://127.0.0.1:9"):
        verify.run_claims(FAST[:1], scheduler="tcp://127.0.0.1:9")

"""Hypothesis profiles: ci (derandomized, no deadline; chosen when CI=true), dev, nightly.

The README's test command runs the suite in worker processes (pytest-xdist, ``-n auto --dist
loadgroup``). Each worker runs one torch thread, as the main job's workers do, and the registry's
claims are grouped by area (``xdist_group``): claims of one area share their trained models through
the worker's cache, and a test that needs a claim's quick record (``quick_record``) joins the
claim's group and reads the record the registry test made, instead of running the claim again.

When the main job (``python -m verify``) has just run on this very code, the registry test reads
its records instead of running each claim a second time: a record is reused only when it was made
at base seed 0, quick scale, on cpu in float64, with shared results fingerprinted (``audited``),
with the same versions and the same :func:`verify.results.source_digest` (every code and data file
and the reference records, by content) as this session. Set RECALL_TEST_RERUN=1 to run every
claim here regardless (docs/testing.md).
"""

import os

if os.environ.get("PYTEST_XDIST_WORKER"):  # one BLAS/OpenMP thread per worker, before torch loads
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=30,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("dev", deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "nightly", deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI", "").lower() == "true" else "dev")
)


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def claim_group(claim_id: str) -> str:
    """The xdist group of a claim: its area, except that an atlas family joins the area whose
    searches it reads (``atlas.hopfield_trained.*`` -> ``hopfield``), so they share the cache, and
    the language-model probes form their own group (as in the main job's workers)."""
    area, topic = claim_id.split(".")[:2]
    if claim_id.startswith("hopfield.lm."):  # the language-model probes share only the loaded models
        return "hopfield.lm"
    if area == "atlas":
        for other in ("fact_mlp", "geometric", "icrecall", "hopfield", "chapters", "retrieval"):
            if topic.startswith(other):
                return other
    return area


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which turns the group markers into node ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "claim_id" in callspec.params:
            item.add_marker(pytest.mark.xdist_group(claim_group(callspec.params["claim_id"])))
        group = item.get_closest_marker("claims_of")
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group.args[0]))
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="no CUDA device on this machine (gpu tests need one)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "claims_of(area): the test reads quick records of that area's claims (same xdist group)"
    )
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # numpy and scipy may have loaded their OpenBLAS before this file set OMP_NUM_THREADS (a
        # plugin imports numpy first); their pools then start one thread per core, and two workers'
        # BLAS calls on two cores oversubscribe the machine (the fact_mlp claims took 2.4x their
        # one-thread time). Limit every loaded pool now, as the main job's workers are limited.
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
        try:
            import torch

            torch.set_num_threads(1)
        except ImportError:
            pass


@pytest.fixture(scope="session")
def claim_cache():
    """One cache per test session (per worker), so claims sharing a trained model train it once."""
    return {}


@pytest.fixture(scope="session")
def claim_records():
    """The quick records (seed 0, cpu, float64, with controls) made in this session, by claim id."""
    return {}


@pytest.fixture(scope="session")
def claim_reads():
    """Per claim id, the shared results (``ctx.shared`` keys, outermost calls, with their counts)
    that each check of its quick record read: the claim's own check first, then each control's in
    order (tests/test_controls_differ.py reads them)."""
    return {}


def _main_job_records() -> dict:
    """The main job's quick records this session may reuse, by claim id (see the module
    docstring): the newest record of each claim in the results folder ``python -m verify`` writes
    (:func:`verify.results.results_root`), kept when it matches this session's code and context;
    none when RECALL_TEST_RERUN is set."""
    if os.environ.get("RECALL_TEST_RERUN", "").lower() in ("1", "true", "yes"):
        return {}
    from verify.results import ResultStore, results_root, source_digest, versions

    folder = results_root()
    if not (folder / "claims.jsonl").is_file():
        return {}
    digest, here = source_digest(), versions()
    if digest == "unknown":
        return {}
    newest = {}
    for record in ResultStore(folder, create=False).records():
        if (
            record.get("scale") == "quick"
            and record.get("seed") == 0
            and record.get("device") == "cpu"
            and record.get("context_dtype", record.get("dtype")) == "float64"
            and record.get("source_digest") == digest
            and record.get("audited") is True
            and record.get("versions") == here
            and "reads" in (record.get("profile") or {})
            and record.get("status") != "error"  # run again here: the traceback comes with it
        ):
            newest[record["id"]] = record
    return newest


@pytest.fixture(scope="session")
def quick_record(claim_cache, claim_records, claim_reads):
    """``quick_record(claim_id)``: the claim's quick record of this session, run once (with its
    controls, in the registry test's context) and shared by the registry test and every test that
    draws from it. Mark such tests ``@pytest.mark.claims_of(area)`` so they run in the claims'
    xdist group."""
    from collections import Counter

    from verify.claims import Context, load_all
    from verify.runner import run_claim

    claims = load_all()

    reusable = _main_job_records()

    def get(claim_id: str) -> dict:
        if claim_id not in claim_records and claim_id in reusable:
            record = reusable[claim_id]
            claim_reads[claim_id] = [
                Counter({(fn, digest): n for fn, digest, n in rows}) for rows in record["profile"]["reads"]
            ]
            claim_records[claim_id] = record
        if claim_id not in claim_records:
            ctx = Context(seed=0, device="cpu", dtype="float64", scale="quick", cache=claim_cache, audit=True)
            record = run_claim(claims[claim_id], ctx)
            claim_reads[claim_id] = [
                Counter({(fn, digest): n for fn, digest, n in rows}) for rows in record["profile"]["reads"]
            ]
            claim_records[claim_id] = record
        return claim_records[claim_id]

    return get

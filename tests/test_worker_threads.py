"""The README's test command runs one worker process per core, each on one thread (tests/conftest.py):
torch's intra-op pool and every BLAS pool numpy and scipy loaded, as in the main job's workers."""

import os

import pytest


@pytest.mark.skipif(
    not os.environ.get("PYTEST_XDIST_WORKER"), reason="only a pytest-xdist worker limits its threads"
)
def test_every_thread_pool_of_a_worker_has_one_thread():
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    import torch
    from threadpoolctl import threadpool_info

    pools = {f"{i['internal_api']} {i['filepath']}": i["num_threads"] for i in threadpool_info()}
    assert pools, "threadpoolctl found no thread pool (numpy's BLAS at least should be loaded)"
    assert all(n == 1 for n in pools.values()), pools
    assert torch.get_num_threads() == 1

"""Set-up shared by ``tests/`` and ``compat_tests/``.

The default suite runs on two pytest-xdist worker processes (``addopts`` in
``pyproject.toml``). Each worker computes on one thread (BLAS, OpenMP and PyTorch, which
reads ``OMP_NUM_THREADS`` when it is imported), and so do the processes its tests start:
two workers with a thread pool each would ask a 2-core machine for four threads.
"""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_name] = "1"
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # NumPy's BLAS, loaded before this file

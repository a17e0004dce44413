"""A local Ray cluster for the Ray Tune tests: one per pytest process (each xdist worker that
runs a Ray test starts its own), two CPUs, no dashboard, workers' output not copied here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    """The GCS address of this process's local Ray cluster (started on first use)."""
    ray = pytest.importorskip("ray", reason="Ray Tune is not installed: pip install -e '.[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()

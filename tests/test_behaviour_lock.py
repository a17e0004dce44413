"""Proposals are bit-for-bit what they were when ``tests/data/proposal_hashes.json`` was recorded.

Each of the six engine algorithms, in both presets, runs 60 asks (single asks, then one batch
of three) on two fixed functions, a shifted sphere at D = 20 and a shifted Rastrigin-like
function at D = 100, with ``budget=60``. The SHA-1 of every proposed point (its float64
bytes) and its meta is compared with the recorded one, so any change of behaviour, however
small, fails here. Refactors must keep these; a deliberate change of behaviour re-records
them with ``HDBO_RECORD_HASHES=1 python -m pytest tests/test_behaviour_lock.py``.

The last bits of BLAS and NumPy's vector kernels differ between CPUs with and without
AVX-512, and a run's proposals diverge from there, so the hashes are kept per instruction
set (:func:`hdbo_cli.bench.vector_isa`). A deliberate change re-records them on each; on an
instruction set with none recorded the test skips and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from hdbo_cli.bench import vector_isa
from hdbo_engine import get_algorithm

HASHES = Path(__file__).with_name("data") / "proposal_hashes.json"
ALGORITHMS = ("msucb", "cobbo", "goucb", "bkb", "gpucb", "random")
PRESETS = ("practical", "paper")
N_ASKS = 60


def _sphere(x: np.ndarray) -> float:
    return float(np.sum((x - 0.31) ** 2))


def _rastrigin(x: np.ndarray) -> float:
    z = 4.0 * (x - 0.62)
    return float(np.sum(z**2 - np.cos(2 * np.pi * z)))


PROBLEMS = {"sphere20": (_sphere, 20), "rastrigin100": (_rastrigin, 100)}


def _run_hash(algo: str, preset: str, problem: str) -> str:
    if algo == "goucb":
        pytest.importorskip("torch")
    func, dim = PROBLEMS[problem]
    kwargs = {} if algo in ("random",) else {"preset": preset}
    if algo == "random" and preset == "paper":
        pytest.skip("random search has one configuration")
    h = hashlib.sha1()
    with threadpool_limits(1):
        opt = get_algorithm(algo)(dim, seed=3, budget=N_ASKS, **kwargs)
        while opt.n_told < N_ASKS:
            n = 3 if opt.n_told >= N_ASKS - 3 else 1
            proposals = opt.ask(n)
            for p in proposals:
                h.update(np.ascontiguousarray(p.x, dtype=np.float64).tobytes())
                h.update(json.dumps(p.meta, sort_keys=True, default=str).encode())
            opt.tell(np.array([p.x for p in proposals]),
                     [func(p.x) for p in proposals], [p.meta for p in proposals])
    return h.hexdigest()


CASES = [(a, p, q) for a in ALGORITHMS for p in PRESETS for q in PROBLEMS
         if not (a == "random" and p == "paper")]


@pytest.mark.parametrize(("algo", "preset", "problem"), CASES)
def test_proposals_are_unchanged(algo: str, preset: str, problem: str) -> None:
    key, cpu = f"{algo}/{preset}/{problem}", vector_isa()
    recorded = json.loads(HASHES.read_text()) if HASHES.exists() else {}
    if os.environ.get("HDBO_RECORD_HASHES") != "1" and cpu not in recorded:
        pytest.skip(f"no proposal hashes recorded for {cpu} (recorded: {sorted(recorded)})")
    got = _run_hash(algo, preset, problem)
    if os.environ.get("HDBO_RECORD_HASHES") == "1":
        recorded.setdefault(cpu, {})[key] = got
        HASHES.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return
    assert got == recorded[cpu][key], f"{key}: proposals differ from the run recorded on {cpu}"

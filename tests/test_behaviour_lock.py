"""Proposals are bit-for-bit what they were when ``tests/data/proposal_hashes.json`` was recorded.

Each engine algorithm, in each preset, and Auto (deterministic, and told the objective is
noisy so that its portfolio runs) makes 60 asks (single asks, then one batch of three) on
two fixed functions, a shifted sphere at D = 20 and a shifted Rastrigin-like function at
D = 100, with ``budget=60``; Auto also on the sphere with a constraint (its constrained-EI
arm) and on a bump its design's probes cannot see (its evolution strategy). The SHA-1 of
every proposed point (its float64 bytes) and its
meta is compared with the recorded one, so any change of behaviour, however small, fails
here. Refactors must keep these; a deliberate change of behaviour re-records them with
``HDBO_RECORD_HASHES=1 python -m pytest tests/test_behaviour_lock.py``.

The last bits of NumPy's, OpenBLAS's, MKL's and PyTorch's vector kernels differ between
CPUs (AVX2, AVX-512 and its extensions), and a run's proposals diverge from there. Each run
therefore happens in a child process whose kernels are held to what every x86-64-v2 CPU
has (:mod:`hdbo_cli.kernels`), so one recording holds on any such machine with the locked
versions of ``constraints.txt``.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hdbo_cli.kernels import pinned_environment

HASHES = Path(__file__).with_name("data") / "proposal_hashes.json"
ALGORITHMS = ("msucb", "cobbo", "goucb", "bkb", "gpucb", "random", "auto", "auto-noisy")
PRESETS = ("practical", "paper")
SINGLE_PRESET = ("random", "auto", "auto-noisy", "auto-constrained")
N_ASKS = 60

def _sphere(x: np.ndarray) -> float:
    return float(np.sum((x - 0.31) ** 2))


def _rastrigin(x: np.ndarray) -> float:
    z = 4.0 * (x - 0.62)
    return float(np.sum(z**2 - np.cos(2 * np.pi * z)))


def _far_bump(x: np.ndarray) -> float:
    """0 but within 0.3 of (0.9, ..., 0.9): a design whose probes find no effect."""
    return -max(0.0, 0.3 - float(np.linalg.norm(x - 0.9)))


def _constraint(x: np.ndarray) -> list[float]:
    """Feasible iff the first five coordinates sum to at most 1 (active at the optimum)."""
    return [float(np.sum(x[:5])) - 1.0]


PROBLEMS = {"sphere20": (_sphere, 20), "rastrigin100": (_rastrigin, 100),
            "bump30": (_far_bump, 30)}


def run_hash(algo: str, preset: str, problem: str) -> str:
    """The SHA-1 of one run's proposals and metas (run in the pinned child process)."""
    from hdbo_engine import get_algorithm

    func, dim = PROBLEMS[problem]
    kwargs: dict = {} if algo in SINGLE_PRESET else {"preset": preset}
    if algo == "auto-noisy":
        algo, kwargs = "auto", {"noisy": True}
    constrained = algo == "auto-constrained"
    if constrained:
        algo = "auto"
    h = hashlib.sha1()
    opt = get_algorithm(algo)(dim, seed=3, budget=N_ASKS, **kwargs)
    while opt.n_told < N_ASKS:
        n = 3 if opt.n_told >= N_ASKS - 3 else 1
        proposals = opt.ask(n)
        for p in proposals:
            h.update(np.ascontiguousarray(p.x, dtype=np.float64).tobytes())
            h.update(json.dumps(p.meta, sort_keys=True, default=str).encode())
        opt.tell(np.array([p.x for p in proposals]), [func(p.x) for p in proposals],
                 [p.meta for p in proposals],
                 constraints=[_constraint(p.x) for p in proposals] if constrained else None)
    return h.hexdigest()


def _child_hash(algo: str, preset: str, problem: str) -> str:
    done = subprocess.run([sys.executable, __file__, algo, preset, problem],
                          env=pinned_environment(), capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


CASES = [(a, p, q) for a in ALGORITHMS for p in PRESETS for q in ("sphere20", "rastrigin100")
         if not (a in SINGLE_PRESET and p == "paper")]
# Auto's constrained-EI arm (constraints told) and evolution strategy (a flat design)
CASES += [("auto-constrained", "practical", "sphere20"), ("auto", "practical", "bump30")]


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="the hashes are recorded for x86-64 kernels")
@pytest.mark.parametrize(("algo", "preset", "problem"), CASES)
def test_proposals_are_unchanged(algo: str, preset: str, problem: str) -> None:
    if algo == "goucb" or algo.startswith("auto"):
        pytest.importorskip("torch")
    key = f"{algo}/{preset}/{problem}"
    got = _child_hash(algo, preset, problem)
    recorded = json.loads(HASHES.read_text()) if HASHES.exists() else {}
    if os.environ.get("HDBO_RECORD_HASHES") == "1":
        recorded[key] = got
        HASHES.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return
    assert key in recorded, f"{key}: no hash recorded (record with HDBO_RECORD_HASHES=1)"
    assert got == recorded[key], f"{key}: proposals differ from the recorded run"


def test_the_child_pins_numpy_to_its_baseline() -> None:
    """NumPy in the child reports none of its dispatch targets as usable, and PyTorch (where
    installed) runs its default kernels: the pins take effect."""
    probe = ("from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__\n"
             "print(sorted(f for f in __cpu_dispatch__ if __cpu_features__.get(f)))\n"
             "try:\n import torch; print(torch.backends.cpu.get_cpu_capability())\n"
             "except ImportError: print('DEFAULT')\n"
             "from hdbo_cli.kernels import kernels_pinned; print(kernels_pinned())\n")
    done = subprocess.run([sys.executable, "-c", probe], env=pinned_environment(),
                          capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split("\n")[:3] == ["[]", "DEFAULT", "True"]


if __name__ == "__main__":
    print(run_hash(*sys.argv[1:4]))

"""Numerical kernels held to x86-64-v2, so that a run gives the same bits on every x86-64 CPU.

NumPy, the OpenBLAS of NumPy and SciPy, PyTorch's MKL and its own vectorised kernels, oneDNN
and glibc's libm each pick code paths for the CPU they run on (AVX2, AVX-512 and its
extensions), and their last bits differ between those paths; an optimisation run diverges
from there. Each library reads the variables below once, when it loads, so they only take
effect in a new process: :func:`pinned_environment` is the environment to start it with.
``hdbo demo`` and the behaviour lock (``tests/test_behaviour_lock.py``) run this way; in
this mode the demo took about 10% more CPU time than with the CPU's own kernels
(docs/testing.md).
"""

from __future__ import annotations

import os

PINNED_KERNELS = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_CORETYPE": "NEHALEM",  # NumPy's and SciPy's OpenBLAS
    "OPENBLAS_L2_SIZE": "262144",
    "MKL_CBWR": "COMPATIBLE",  # PyTorch's MKL: the same results on any x86-64 CPU
    "ATEN_CPU_CAPABILITY": "default",  # PyTorch's own vectorised kernels
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    # glibc's libm picks FMA and AVX variants of exp, log, pow, ... at load time
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX,-AVX2,-FMA,-FMA4,-AVX512F",
}


def pinned_environment() -> dict[str, str]:
    """This process's environment with :data:`PINNED_KERNELS`, and NumPy's dispatch limited
    to its baseline (``NPY_DISABLE_CPU_FEATURES`` lists every dispatch target)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    env = dict(os.environ, **PINNED_KERNELS)
    env["NPY_DISABLE_CPU_FEATURES"] = " ".join(__cpu_dispatch__)
    return env


def kernels_pinned() -> bool:
    """Whether this process was started with :func:`pinned_environment`'s variables."""
    return all(os.environ.get(k) == v for k, v in PINNED_KERNELS.items()) and \
        "NPY_DISABLE_CPU_FEATURES" in os.environ

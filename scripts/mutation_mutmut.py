"""The mutmut run of the engine's core: what it mutates, the command, and the score per module.

mutmut (``pip install -e ".[mutation]"``, configured in ``pyproject.toml``'s
``[tool.mutmut]``) rewrites every function of the core modules into many mutants and runs,
for each, the fast unit tests that call that function. This script names the scope (whole
modules for the shared numerics, the proposal step of each algorithm), prints the command
that runs it, and scores the results mutmut keeps in ``mutants/``. Mutants judged
equivalent are read from the table in ``docs/testing.md`` (rows ``| `name` | reason |``)
and left out of the score.

Usage::

    eval "$(python scripts/mutation_mutmut.py --command)"   # run mutmut on the scope
    python scripts/mutation_mutmut.py                  # scores and survivors, from mutants/
    python scripts/mutation_mutmut.py --module msucb   # one module
    mutmut run --max-children 1 $(python scripts/mutation_mutmut.py --pending --sampled)

Run mutmut from the repository root of a scratch worktree (it writes ``mutants/`` there),
with one process and one BLAS thread on a shared machine (``docs/testing.md``).
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEP = "\u01c1"  # mutmut's separator between a class and its method in mutant names


def _methods(module: str, cls: str, names: str) -> list[str]:
    return [f"hdbo_engine.{module}.x{SEP}{cls}{SEP}{name}__mutmut_*" for name in names.split()]


def _functions(module: str, names: str) -> list[str]:
    return [f"hdbo_engine.{module}.x_{name}__mutmut_*" for name in names.split()]


# Module -> mutant-name patterns: whole modules for the numerics every algorithm shares;
# for each algorithm its proposal step, ``_propose`` and the functions it calls; for Auto
# its rules (choice, records, noise, recommendation, the constrained-EI and ES arms).
SCOPE: dict[str, list[str]] = {
    "acquisition": ["hdbo_engine.acquisition.*"],
    "trust_region": ["hdbo_engine.trust_region.*"],
    "design": ["hdbo_engine.design.*"],
    "gp": ["hdbo_engine.gp.*"],
    "msucb": _methods("algorithms.msucb", "MSUCB",
                      "_propose _maximize beta region _candidates fixed_values subspaces masks "
                      "_draws _n_new") + _functions("algorithms.msucb", "msucb_beta _condition"),
    "cobbo": _methods("algorithms.cobbo", "CobBO",
                      "_propose _subspace_data _maximize surrogate_values")
    + _functions("algorithms.cobbo", "rbf_estimate rbf_length _multiquadric rbf_from_distances")
    + _methods("algorithms.cobbo", "PairwiseDistances", "update"),
    "bkb": _methods("algorithms.bkb", "BKB",
                    "_propose _fantasy _maximize_box _candidates _coefficients _beta _targets "
                    "_free_arms") + _functions("algorithms.bkb", "_mean_var _mean_var_grad "
                                               "_kernel_matrix bkb_beta"),
    "goucb": _methods("algorithms.goucb", "GOUCB",
                      "_propose _sync beta _select _ucb _region _candidates _joint_ascent"),
    "auto": _methods("algorithms.auto.portfolio", "Auto",
                     "ask recommend noise_observed records _choice_rng allocate")
    + _functions("algorithms.auto.arm", "outcomes")
    + _functions("algorithms.auto.noise", "noise_observed is_noisy replicate recommend")
    + _methods("algorithms.auto.constrained_ei", "ConstrainedEIArm", "eligible radius make")
    + _methods("algorithms.auto.evolution", "EvolutionArm", "eligible state make")
    + _methods("algorithms.auto.members", "MemberArm", "sync ask")
    + _functions("algorithms.auto.members", "default_members"),
}
EXCLUDED_STATUSES = ("not checked", "skipped")
# --sampled runs only the mutants whose number is a multiple of this (the larger modules on
# a shared machine; the scores are then estimates from that sample).
SAMPLE = {"design": 2, "gp": 3, "msucb": 2, "cobbo": 2, "bkb": 3, "goucb": 3, "auto": 3}


def command(modules: list[str]) -> str:
    patterns = [p for m in modules for p in SCOPE[m]]
    return ("OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 "
            "nice -n 15 mutmut run --max-children 1 " + " ".join(map(shlex.quote, patterns)))


def equivalents(path: Path = ROOT / "docs" / "testing.md") -> dict[str, str]:
    """Mutant name -> reason, from the rows ``| `name` | reason |`` of ``docs/testing.md``."""
    if not path.exists():
        return {}
    rows = re.findall(r"^\|\s*`([^`]+__mutmut_\d+)`\s*\|\s*(.+?)\s*\|\s*$", path.read_text(),
                      flags=re.MULTILINE)
    return dict(rows)


def results() -> dict[str, str]:
    """Mutant name -> mutmut's status (``mutmut results --all true``)."""
    out = subprocess.run(["mutmut", "results", "--all", "true"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return dict(re.findall(r"^\s+(\S+__mutmut_\d+): (.+)$", out, flags=re.MULTILINE))


def in_scope(name: str, module: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in SCOPE[module])


def sampled(name: str, module: str) -> bool:
    return int(name.rsplit("_", 1)[1]) % SAMPLE.get(module, 1) == 0


def pending(modules: list[str], status: dict[str, str], sample: bool) -> list[str]:
    """The mutants of ``modules`` not run yet, or run and not killed (to run again after
    new tests), only the sampled ones with ``sample``."""
    return [n for n in status for m in modules
            if in_scope(n, m) and (not sample or sampled(n, m))
            and status[n] in ("not checked", "survived", "no tests", "suspicious")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module", nargs="+", choices=sorted(SCOPE), default=list(SCOPE),
                        help="modules to report [all]")
    parser.add_argument("--command", action="store_true", help="print the mutmut command")
    parser.add_argument("--pending", action="store_true",
                        help="print the names of the mutants not run or not killed yet, one a "
                             "line (for `mutmut run --max-children 1 $(...)`)")
    parser.add_argument("--sampled", action="store_true",
                        help="with --pending: only every k-th mutant of the modules in SAMPLE")
    args = parser.parse_args(argv)
    if args.command:
        print(command(args.module))
        return 0
    status, equivalent = results(), equivalents()
    if args.pending:
        print("\n".join(n for n in pending(args.module, status, args.sampled)
                        if n not in equivalent))
        return 0
    print("| module | in scope | run | killed | survived | no tests | timeout | equivalent "
          "| score |")
    print("|---|---|---|---|---|---|---|---|---|")
    survivors: list[str] = []
    for module in args.module:
        names = [n for n in status if in_scope(n, module)
                 and status[n] not in EXCLUDED_STATUSES]
        counts = Counter("equivalent" if n in equivalent else status[n] for n in names)
        killed = counts["killed"] + counts["timeout"] + counts["caught by type check"]
        scored = len(names) - counts["equivalent"]
        score = f"{100 * killed / scored:.1f}%" if scored else "-"
        total = sum(1 for n in status if in_scope(n, module))
        print(f"| {module} | {total} | {len(names)} | {counts['killed']} | {counts['survived']} | "
              f"{counts['no tests']} | {counts['timeout']} | {counts['equivalent']} | {score} |")
        survivors += [n for n in names if n not in equivalent
                      and status[n] in ("survived", "no tests", "suspicious")]
    print(f"\nsurvivors ({len(survivors)}):")
    for name in survivors:
        print(f"  {name}: {status[name]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Mutation score of the algorithm tests: deliberate bugs, and which test catches each.

Each mutant is a text patch (one or more exact replacements) applied to a temporary copy of
the repository. The mutant's relevant test files then run there
(``python -m pytest <files> -x -q -n 0`` with ``PYTHONPATH`` pointing at the copy); the first
failing test is the one that caught it. A mutant whose files all pass survived. Before the
mutants, the same files run on the unmodified copy: they must pass, or the score means
nothing.

Usage::

    python benchmarks/mutation_score.py              # every mutant
    python benchmarks/mutation_score.py --list       # names and descriptions
    python benchmarks/mutation_score.py --only msucb-ucb-sign bkb-box-sign
    python benchmarks/mutation_score.py -k beats_random   # only the end-to-end comparisons

Set ``OMP_NUM_THREADS=1`` (and the other BLAS thread counts) on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("hdbo_engine", "hdbo_cli", "hdbo_adapters", "tests", "pyproject.toml")
MODEL_PHASE = "tests/test_model_phase_algorithms.py"
AUTO = "hdbo_engine/algorithms/auto/portfolio.py"
AUTO_ARM = "hdbo_engine/algorithms/auto/arm.py"
AUTO_NOISE = "hdbo_engine/algorithms/auto/noise.py"
AUTO_CEI = "hdbo_engine/algorithms/auto/constrained_ei.py"
AUTO_ES = "hdbo_engine/algorithms/auto/evolution.py"
AUTO_MEMBERS = "hdbo_engine/algorithms/auto/members.py"
AUTO_COBYLA = "hdbo_engine/algorithms/auto/cobyla.py"
AUTO_TESTS = ("tests/test_auto.py", "tests/test_constraints.py")
COBYLA_TESTS = ("tests/test_auto_cobyla.py", "tests/test_design.py")


@dataclass(frozen=True)
class Mutant:
    """A deliberate bug: ``(old, new)`` replacements in ``path``, each matching exactly once."""

    name: str
    description: str
    path: str
    replacements: tuple[tuple[str, str], ...]
    tests: tuple[str, ...]


MUTANTS = (
    Mutant("msucb-ucb-sign", "MS-UCB maximises -mu + sqrt(beta) sigma",
           "hdbo_engine/algorithms/msucb.py",
           (("return ucb(mean, var, dmean, dvar, beta)",
             "return ucb(-mean, var, None if dmean is None else -dmean, dvar, beta)"),),
           (MODEL_PHASE, "tests/test_msucb.py")),
    Mutant("msucb-beta-scale-dropped", "MS-UCB's acquisition ignores beta_scale (10x beta)",
           "hdbo_engine/algorithms/msucb.py",
           (("        beta = self.beta(t)\n",
             "        beta = msucb_beta(t, self.d, self.dim, o.a, o.b, o.delta)\n"),),
           (MODEL_PHASE, "tests/test_msucb.py")),
    Mutant("msucb-t-from-zero", "MS-UCB's t counts the initial design too",
           "hdbo_engine/algorithms/msucb.py",
           (("t = max(1, self.n_told + len(fantasy) - self._design_length() + 1)",
             "t = max(1, self.n_told + len(fantasy) + 1)"),),
           (MODEL_PHASE, "tests/test_msucb.py")),
    Mutant("ucb-beta-not-rooted", "GP-UCB's bonus is beta sigma instead of sqrt(beta) sigma",
           "hdbo_engine/acquisition.py",
           (("value = mean + np.sqrt(beta) * sd", "value = mean + beta * sd"),),
           (MODEL_PHASE, "tests/test_msucb.py")),
    Mutant("trust-region-never-restarts", "the trust region stays at its minimum side",
           "hdbo_engine/trust_region.py",
           (("self.length, self.restarts = self.length_init, self.restarts + 1",
             "self.length = self.length_min"),),
           (MODEL_PHASE, "tests/test_msucb.py", "tests/test_trust_region.py")),
    Mutant("gp-noise-dropped", "the GP's noise variance is left out of K",
           "hdbo_engine/gp.py",
           (("K[np.diag_indices_from(K)] += p.noise_var + self.extra_noise",
             "K[np.diag_indices_from(K)] += self.extra_noise"),),
           (MODEL_PHASE, "tests/test_gp.py")),
    Mutant("ei-sign", "expected improvement measured below the incumbent",
           "hdbo_engine/acquisition.py",
           (("    u = (mean - best) / sd\n    cdf, pdf = norm.cdf(u), norm.pdf(u)\n"
             "    value = (mean - best) * cdf + sd * pdf",
             "    u = (best - mean) / sd\n    cdf, pdf = norm.cdf(u), norm.pdf(u)\n"
             "    value = (best - mean) * cdf + sd * pdf"),),
           (MODEL_PHASE, "tests/test_cobbo.py")),
    Mutant("bkb-box-sign", "BKB's box acquisition maximises -mu~ + beta~ sigma~",
           "hdbo_engine/algorithms/bkb.py",
           (("        score = mu + beta * np.sqrt(var)\n        n_refine = self.options.n_refine",
             "        score = -mu + beta * np.sqrt(var)\n        n_refine = self.options.n_refine"),
            ("return m + beta * s, dm + beta * dv / (2.0 * s[:, None])",
             "return -m + beta * s, -dm + beta * dv / (2.0 * s[:, None])")),
           (MODEL_PHASE, "tests/test_bkb.py")),
    Mutant("bkb-xi-is-lambda", "BKB's xi defaults to lambda instead of sqrt(lambda)",
           "hdbo_engine/algorithms/bkb.py",
           (("xi = o.xi if o.xi is not None else math.sqrt(sk.lam)",
             "xi = o.xi if o.xi is not None else sk.lam"),),
           (MODEL_PHASE, "tests/test_bkb.py")),
    Mutant("cobbo-backoff-never", "CobBO's backoff rule never ends a block",
           "hdbo_engine/algorithms/cobbo.py",
           (("if flat or (self.N >= self.tau and delta <= 0.1 and self.P <= backoff_xi(delta)):",
             "if flat:"),),
           (MODEL_PHASE, "tests/test_cobbo.py")),
    Mutant("cobbo-weights-swapped", "CobBO's eq. (2) rewards failures and punishes successes",
           "hdbo_engine/algorithms/cobbo.py",
           (("math.log(o.alpha) if improved else -math.log(o.beta)",
             "-math.log(o.beta) if improved else math.log(o.alpha)"),),
           (MODEL_PHASE, "tests/test_cobbo.py")),
    Mutant("goucb-phase2-skipped", "GO-UCB never updates Sigma_t and w_t in Phase II",
           "hdbo_engine/algorithms/goucb.py",
           (("while i < self.n_told:", "while i < end:"),),
           (MODEL_PHASE, "tests/test_goucb.py")),
    Mutant("goucb-no-bonus", "GO-UCB's step 5 drops the confidence bonus (beta = 0)",
           "hdbo_engine/algorithms/goucb.py",
           (("x, value = self._select(ball, w, beta, rng)",
             "x, value = self._select(ball, w, 0.0, rng)"),),
           (MODEL_PHASE, "tests/test_goucb.py")),
    Mutant("auto-choice-argmin", "Auto asks the member with the smallest Thompson draw",
           AUTO, (("return max(draws, key=lambda n: draws[n])",
                   "return min(draws, key=lambda n: draws[n])"),),
           AUTO_TESTS),
    Mutant("auto-beta-swapped", "Auto draws Beta(1 + failures, 1 + successes)",
           AUTO, (("rng.beta(1 + s, 1 + f)", "rng.beta(1 + f, 1 + s)"),), AUTO_TESTS),
    Mutant("auto-window-ignored", "Auto's records keep every told proposal, not the last window",
           AUTO, (("found.get(n, [])[-window:]", "found.get(n, [])"),), AUTO_TESTS),
    Mutant("auto-success-vs-last", "a success beats the previous value instead of the best",
           AUTO_ARM, (("            best = min(best, float(y))\n    return found",
                       "            best = float(y)\n    return found"),), AUTO_TESTS),
    Mutant("auto-recommend-optimistic", "the noisy recommendation minimises mu - 1.28 sigma",
           AUTO_NOISE, (("quantile = mean + ndtri(RECOMMEND_QUANTILE)",
                   "quantile = mean - ndtri(RECOMMEND_QUANTILE)"),), AUTO_TESTS),
    Mutant("auto-replicate-never-differs", "a replicate never shows noise",
           AUTO_NOISE, (("differs = not np.isclose(y, opt._y[i], rtol=1e-9, atol=0.0)",
                   "differs = False"),), AUTO_TESTS),
    Mutant("auto-replicate-wrong-point", "the replicate repeats the design's last point",
           AUTO_NOISE,
           (("i = int(design[best_index(y, None if opt._c is None else opt._c[design])])",
             "i = int(design[-1])"),), AUTO_TESTS),
    Mutant("auto-replicate-threshold-inverted", "a replicate follows a smooth design",
           AUTO_NOISE, (("params.noise_var < NOISY_VAR:", "params.noise_var >= NOISY_VAR:"),),
           AUTO_TESTS),
    Mutant("auto-cei-never-shrinks", "the constrained-EI box never halves",
           AUTO_CEI, (("radius, failures = max(0.5 * radius, CEI_MIN_RADIUS), 0",
                   "radius, failures = radius, 0"),), AUTO_TESTS),
    Mutant("auto-es-rule-inverted", "the evolution strategy's step grows on a failure",
           AUTO_ES, (("min(sigma * ES_UP, ES_MAX_SIGMA) if success else sigma * ES_DOWN",
                   "min(sigma * ES_UP, ES_MAX_SIGMA) if not success else sigma * ES_DOWN"),),
           AUTO_TESTS),
    Mutant("auto-es-restart-at-incumbent", "the evolution strategy restarts at the incumbent",
           AUTO_ES, (("if state.restarts and state.parent is None:", "if False:"),),
           AUTO_TESTS),
    Mutant("auto-others-told-as-own", "a member is told the others' points with their metas",
           AUTO_MEMBERS, (("metas = [m if m.get(KEY, name) == name else {KEY: m[KEY]}",
                           "metas = [m if True else {KEY: m[KEY]}"),), AUTO_TESTS),
    Mutant("auto-cobyla-rhobeg", "COBYLA starts with a radius of 1/5 of the box, not 1/6",
           AUTO_COBYLA, (("COBYLA_RHOBEG = 1.0 / 6.0", "COBYLA_RHOBEG = 1.0 / 5.0"),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-at-ten-per-dim", "the COBYLA phase also runs at 10 evaluations per "
           "effective dimension", AUTO_COBYLA, (("auto.budget >= COBYLA_PER_DIM * d_eff",
                                                 "auto.budget > COBYLA_PER_DIM * d_eff"),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-every-probed-coordinate", "the effective dimension counts every "
           "probed coordinate", AUTO_COBYLA, (("float(changed[probed].mean())", "1.0"),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-failure-as-best", "a failed COBYLA point counts as the best value fed",
           AUTO_COBYLA, (("else cache.worst  # a failure",
                   "else min(cache.known.values())  # a failure"),),
           COBYLA_TESTS),
    Mutant("auto-cobyla-start-moves", "COBYLA's run restarts from each new incumbent",
           AUTO_COBYLA, (("start = auto._metas[rows[0]].get(COBYLA_X0) if rows else",
                   "start = "),), COBYLA_TESTS),
    Mutant("design-effect-any-probe", "a coordinate counts as changed when it was probed",
           "hdbo_engine/design.py", (("bool(changed[j] or y[i] != y[b])", "True"),),
           COBYLA_TESTS),
)


def make_copy(destination: Path) -> None:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, destination / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, destination / name)


def apply(mutant: Mutant, copy: Path) -> None:
    path = copy / mutant.path
    text = path.read_text()
    for old, new in mutant.replacements:
        count = text.count(old)
        if count != 1:
            raise SystemExit(f"mutant {mutant.name}: {old!r} occurs {count} times in "
                             f"{mutant.path} (expected once); update the mutant")
        text = text.replace(old, new)
    path.write_text(text)


def run_tests(copy: Path, files: tuple[str, ...], timeout: float,
              keyword: str | None = None) -> tuple[str, str, float]:
    """``(outcome, first failing test or "", seconds)``; outcome is "passed", "failed",
    "error" (collection or import), "timeout" or "none selected" (``keyword`` matched no
    test)."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    cmd = [sys.executable, "-m", "pytest", *files, "-x", "-q", "-rf", "-p", "no:cacheprovider",
           "-n", "0"]
    if keyword:
        cmd += ["-k", keyword]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", "", time.perf_counter() - start
    seconds = time.perf_counter() - start
    if proc.returncode == 0:
        return "passed", "", seconds
    if proc.returncode == 5:
        return "none selected", "", seconds
    failed = re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.MULTILINE)
    if failed:
        return "failed", failed[0], seconds
    return "error", proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "", seconds


def check_copy_is_imported(copy: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(copy)}
    out = subprocess.run([sys.executable, "-c", "import hdbo_engine; print(hdbo_engine.__file__)"],
                         cwd=copy, env=env, capture_output=True, text=True, check=True)
    if not Path(out.stdout.strip()).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"the copy is not the imported package: {out.stdout.strip()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run these mutants only")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds per test run [900]")
    parser.add_argument("-k", "--keyword", default=None,
                        help="pytest -k expression: run only the matching tests of each file set "
                             "(e.g. 'beats_random' to see what the end-to-end tests catch)")
    args = parser.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:28s} {m.description}  [{m.path}]")
        return 0
    names = {m.name for m in MUTANTS}
    unknown = sorted(set(args.only or ()) - names)
    if unknown:
        parser.error(f"--only: unknown mutant(s) {unknown}; expected names from {sorted(names)}")
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only]
    with tempfile.TemporaryDirectory(prefix="hdbo-mutants-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        make_copy(base)
        check_copy_is_imported(base)
        files = tuple(dict.fromkeys(f for m in chosen for f in m.tests))
        outcome, first, seconds = run_tests(base, files, args.timeout, args.keyword)
        print(f"unmodified copy: {outcome} ({seconds:.0f} s) {first}", flush=True)
        if outcome != "passed":
            print("the tests fail without a mutant: fix them before scoring")
            return 1
        rows = []
        for mutant in chosen:
            copy = Path(tmp) / mutant.name
            copy.mkdir()
            make_copy(copy)
            apply(mutant, copy)
            outcome, first, seconds = run_tests(copy, mutant.tests, args.timeout,
                                                args.keyword)
            caught = outcome not in ("passed", "none selected")
            rows.append((mutant.name, "caught" if caught else "SURVIVED",
                         first or outcome if caught else "", seconds))
            print(f"{mutant.name:28s} {rows[-1][1]:8s} {seconds:5.0f} s  {rows[-1][2]}",
                  flush=True)
            shutil.rmtree(copy)
    n_caught = sum(r[1] == "caught" for r in rows)
    print()
    print("| mutant | result | caught by | s |\n|---|---|---|---|")
    for name, result, by, seconds in rows:
        print(f"| {name} | {result} | {by} | {seconds:.0f} |")
    print(f"\nmutation score: {n_caught} / {len(rows)} caught")
    return 0 if n_caught == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

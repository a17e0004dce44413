"""Tables (``BENCHMARKS.md``) and plots (``hdbo plot``) from an ``hdbo bench`` output folder.

Statistics are over seeds: the median final best value with its
interquartile range, the median value at each of the :data:`CHECKPOINTS` below the budget
(:func:`checkpoint_medians`; a stopped cell counts where it reached the checkpoint), the
median over all evaluations of all seeds of the optimizer time per evaluation (ask + tell;
CPU seconds, which a cell's single thread makes equal to wall time on an idle core and
which other load on the machine does not inflate; wall seconds for cells recorded before the
CSVs had CPU columns), and the median peak memory.
Ratios against a peer divide our median *regret* (best value minus the
problem's known minimum, or minus the lowest value any method reached where
the minimum is unknown (BBOB), so it is positive whatever the sign of the values)
by the peer's, and our median time per ask by the peer's, both taken over
the evaluations every seed of both methods reached (time per ask grows with
the history, so a method stopped early is not flattered by its missing late
asks); below 1 means we are better. Only finished cells (status ``done``) enter the value
tables; a cell stopped by the suite's time limit is listed as DNF with the
evaluations it reached.

Noisy groups (``noisy_*`` problems) are scored by the noise-free value of the
point each method recommends at the end (:mod:`hdbo_cli.bench`), not by its
best noisy draw.

Constrained groups (cells whose JSON has ``constraints``) are scored by the best
feasible value (the CSV's ``best_so_far`` there; infinite, shown as "none", before
the first feasible point), with the number of seeds on which each method found a
feasible point; the count below then compares the medians of the best feasible
values, and :func:`feasibility_verdict` says whether Auto finds a feasible point on
every seed of every group where any peer finds one.

The count (:func:`targets`). ``auto`` is counted alone, never the best of our
algorithms picked per group afterwards: a group is won when Auto's median is
lower than the median of *every* peer the suite lists for that group (random
search and the other libraries' optimizers, :data:`REFERENCE_PEERS`). Auto and a
peer are compared on the seeds both have cells for (a peer run on fewer seeds, such as
vanilla BoTorch, is compared on its own, and the report says so); a listed peer with no
cell on any of Auto's seeds makes the group *incomplete*, not won. Two methods are
compared at equal evaluations: on each seed, both at the fewer evaluations either
reached (a cell stopped by the time limit compares with Auto's best so far at the
evaluation it reached; in noisy groups, the noise-free value of the recommendation at the
last checkpoint not after it); a stopped cell is never dropped. Auto's floor, per group:
a lower median than random search's and than TPE's, and a median no worse than the median
of the four single algorithms' medians (:data:`SINGLE_ALGORITHMS`).

How firmly the seeds decide a won group (:func:`auto_win_share`): the share of bootstrap
resamples of the seeds (:data:`BOOTSTRAP_DRAWS`; Auto and each peer on the same drawn seeds)
in which Auto's median still beats every peer's; a group counts as firmly won from
:data:`BOOTSTRAP_WIN` (60%). Auto against its parts (:func:`auto_against_parts`): each of
:data:`PARTS` alone, where it has cells, with the same resampling for the best part
(:func:`auto_parts_share`). Leads at the :data:`CHECKPOINTS` evaluations
(:func:`auto_leads_at`), in the groups whose budget is larger.
"""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .bench import PEERS, methods, ours

REFERENCE_PEERS = ("random", *PEERS)  # what Auto must beat, where the suite lists them
SINGLE_ALGORITHMS = ("msucb", "cobbo", "goucb", "bkb")  # Auto's floor: the median of these
FLOOR_PEERS = ("random", "optuna-tpe")  # Auto's floor: a lower median than each of these
# Auto's parts, each alone: its members and the design followed by COBYLA
PARTS = (*SINGLE_ALGORITHMS, "auto-cobyla")
CHECKPOINTS = (50, 100, 200)  # evaluations at which leads are counted, below the budget
BOOTSTRAP_WIN = 0.6  # a won group's least share of bootstrap resamples Auto wins
SAME_RUN_RTOL = 1e-9  # medians this close are one run's (auto_against_parts)
BOOTSTRAP_DRAWS = 2000


@dataclass
class CellRun:
    """One cell as the count needs it: evaluations reached, best-so-far curve and, for a
    noisy problem, the noise-free values of its recommendations (evaluation, value)."""

    evaluations: int
    curve: np.ndarray
    true_trace: np.ndarray | None = None

    def value_at(self, evaluation: int) -> float:
        """The best so far after ``evaluation`` evaluations; for a noisy problem the
        noise-free value of the recommendation at the last checkpoint not after it (NaN if
        none)."""
        if self.true_trace is None:
            return float(self.curve[evaluation - 1])
        before = self.true_trace[self.true_trace[:, 0] <= evaluation]
        return float(before[-1, 1]) if len(before) else np.nan

    @property
    def final(self) -> float:
        """The value the cell ends at (:meth:`value_at` its last evaluation)."""
        return self.value_at(self.evaluations)


@dataclass
class GroupStats:
    """Per method: final bests, per-evaluation times, trajectories and statuses of one group.

    ``best`` holds finished cells' final values (noisy groups: the noise-free value of the
    final recommendation); ``runs`` every cell by seed; ``listed`` the methods the suite
    lists for the group (empty: not known, the methods that have cells count instead).
    """

    problem: str
    dim: int
    budget: int
    f_min: float | None
    noise: str | None = None
    listed: list[str] = field(default_factory=list)
    constraints: int = 0  # the number of constraints; 0: unconstrained
    best_known: float | None = None  # a constrained problem's best known value, if any
    workers: int = 1  # points asked and told together (synchronous batches)
    feasible: dict[str, dict[int, bool]] = field(default_factory=lambda: defaultdict(dict))
    runs: dict[str, dict[int, CellRun]] = field(default_factory=lambda: defaultdict(dict))
    best: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    times: dict[str, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    curves: dict[str, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    rss: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    total: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    dnf: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))

    @property
    def name(self) -> str:
        workers = f"-w{self.workers}" if self.workers > 1 else ""
        return f"{self.problem}-D{self.dim}-n{self.budget}{workers}"

    def methods(self) -> list[str]:
        seen = set(self.best) | set(self.dnf)
        return [m for m in methods() if m in seen]

    def medians_at_equal_evaluations(self, compared: list[str], at: int | None = None
                                     ) -> dict[str, float] | None:
        """Median over seeds of each method's value at equal evaluations
        (:meth:`values_at_equal_evaluations`); None where that is None."""
        values = self.values_at_equal_evaluations(compared, at)
        return None if values is None else {m: float(np.median(v)) for m, v in values.items()}

    def values_at_equal_evaluations(self, compared: list[str], at: int | None = None
                                    ) -> dict[str, np.ndarray] | None:
        """Each method's value per seed (in seed order) when, on each seed, every one of
        ``compared`` is taken at the fewest evaluations any of them reached there (at most
        ``at``, when given: a checkpoint).

        The seeds are those every one of ``compared`` has a cell for (a peer run on fewer
        seeds is compared on its own); None when there is none (or, in a noisy group, when
        one of them has no recommendation scored by then).
        """
        seeds = self.shared_seeds(compared)
        if not seeds:
            return None
        values: dict[str, list[float]] = {m: [] for m in compared}
        for s in sorted(seeds):
            reached = min(self.runs[m][s].evaluations for m in compared)
            reached = reached if at is None else min(reached, at)
            for m in compared:
                values[m].append(self.runs[m][s].value_at(reached))
        if any(np.isnan(v).any() for v in values.values()):
            return None
        return {m: np.asarray(v) for m, v in values.items()}

    def shared_seeds(self, compared: list[str]) -> set[int]:
        """The seeds every one of ``compared`` has a cell for."""
        return set.intersection(*(set(self.runs.get(m, {})) for m in compared))

    @property
    def f_ref(self) -> float:
        """The known minimum, or the lowest final value of any method when it is unknown."""
        if self.f_min is not None:
            return self.f_min
        return min((min(v) for v in self.best.values() if v), default=0.0)

    def median_best(self, method: str) -> float:
        return float(np.median(self.best[method])) if self.best.get(method) else np.nan

    def median_time(self, method: str, upto: int | None = None) -> float:
        """Median time per ask over all seeds' evaluations (the first ``upto`` of each)."""
        t = self.times.get(method)
        return float(np.median(np.concatenate([a[:upto] for a in t]))) if t else np.nan

    def time_ratio(self, method: str, peer: str) -> float:
        """``method``'s median time per ask over ``peer``'s, both over the evaluations both reached.

        Time per ask grows with the history, so a cell that stopped early (DNF)
        is compared on the first evaluations only: its median is not lowered by
        lacking the late, expensive asks.
        """
        if not self.times.get(method) or not self.times.get(peer):
            return np.nan
        upto = min(len(a) for a in [*self.times[method], *self.times[peer]])
        return self.median_time(method, upto) / self.median_time(peer, upto)


def load_results(out: Path) -> list[GroupStats]:
    """Read every finished cell under ``out/cells`` into per-group statistics."""
    groups: dict[str, GroupStats] = {}
    listed = _listed_methods(out)
    for json_path in sorted((out / "cells").glob("*/*/seed*.json")):
        s = json.loads(json_path.read_text())
        info = s.get("problem_info", {})
        g = groups.setdefault(s["group"], GroupStats(
            s["problem"], s["dim"], s["budget"], s["f_min"], noise=info.get("noise"),
            listed=listed.get(s["group"], []), constraints=s.get("constraints", 0),
            best_known=info.get("best_known"), workers=s.get("workers", 1)))
        if s["f_min"] != g.f_min:
            raise ValueError(
                f"{json_path}: f_min {s['f_min']} differs from {g.f_min} in the other cells of "
                f"group {s['group']}: their values are not on one scale, so their medians "
                "cannot be compared (a problem whose optimal value moves with the seed must "
                "report values relative to it, as bbob-f<k>-seeded reports f - f_opt)")
        with open(json_path.with_suffix(".csv")) as fh:
            data = np.array([[float(r["best_so_far"]), _ask_tell_seconds(r)]
                             for r in csv.DictReader(fh)]).reshape(-1, 2)
        m = s["method"]
        g.times[m].append(data[:, 1])
        g.rss[m].append(s["peak_rss_mib"])
        g.total[m].append(s.get("optimizer_cpu_s", s["optimizer_time_s"]))
        g.curves[m].append(data[:, 0])  # a DNF curve is drawn as far as it got
        noisy = "final_true_value" in s
        trace = np.array(s["true_trace"], dtype=float).reshape(-1, 2) if noisy else None
        g.runs[m][int(s["seed"])] = CellRun(int(s["evaluations"]), data[:, 0], trace)
        if g.constraints:
            g.feasible[m][int(s["seed"])] = bool(s["feasible_found"])
        if s["status"] == "done":
            g.best[m].append(s["final_true_value"] if noisy else s["best"])
        else:
            g.dnf[m].append(s["evaluations"])
    return [groups[k] for k in sorted(groups)]


def _listed_methods(out: Path) -> dict[str, list[str]]:
    """Group name -> the methods the run's suite lists for it (empty without suite.toml)."""
    from .bench import load_suite

    if not (out / "suite.toml").exists():
        return {}
    listed: dict[str, list[str]] = defaultdict(list)
    for cell in load_suite(str(out / "suite.toml")).cells_by_seed:
        if cell.method not in listed[cell.group]:
            listed[cell.group].append(cell.method)
    return dict(listed)


def _versions_lines(cell_files: list[Path]) -> list[str]:
    """One line per set of library versions the cells were made with, and a warning when
    the tables mix several (cells from before versions were recorded count as one set)."""
    sets: dict[str, int] = {}
    for path in cell_files:
        versions = json.loads(path.read_text()).get("versions")
        key = ("not recorded" if versions is None else
               ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None))
        sets[key] = sets.get(key, 0) + 1
    lines = [f"Versions ({n} cells): {key}" for key, n in sorted(sets.items())]
    if len(sets) > 1:
        lines.append(f"\n**These tables mix {len(sets)} sets of library versions** (above): "
                     "a difference between methods may come from the versions.")
    return lines


def _header(csv_path: Path) -> str:
    """First line of a cell CSV (its column names), without reading the rest."""
    with open(csv_path) as fh:
        return fh.readline()


def _ask_tell_seconds(row: dict[str, str]) -> float:
    """Optimizer seconds of one evaluation: CPU time where the CSV has it, else wall time."""
    if row.get("ask_cpu_s"):
        return float(row["ask_cpu_s"]) + float(row["tell_cpu_s"])
    return float(row["ask_s"]) + float(row["tell_s"])


def _fmt(v: float, digits: int = 4) -> str:
    if not np.isfinite(v):
        return "–"
    return f"{v:.{digits}g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.{digits - 2}e}"


def _fmt_best(v: float, digits: int = 4) -> str:
    """:func:`_fmt`, with a constrained method's infinite best feasible value as "none"."""
    return "none" if v == np.inf else _fmt(v, digits)


def _fmt_pair(a: float, b: float) -> str:
    """``"a vs b"`` by :func:`_fmt_best`, with as many significant digits (4 to 10) as tell
    two different values apart."""
    for digits in range(4, 11):
        left, right = _fmt_best(a, digits), _fmt_best(b, digits)
        if left != right or a == b:
            break
    return f"{left} vs {right}"


def _value_cell(g: GroupStats, m: str, winner: bool) -> str:
    if g.best.get(m) and not np.isfinite(g.best[m]).all():  # constrained, seeds without
        q1, q3 = np.percentile(g.best[m], [25, 75], method="nearest")  # a feasible point
        text = f"{_fmt_best(g.median_best(m))} [{_fmt_best(q1)}, {_fmt_best(q3)}]"
        return f"**{text}**" if winner else text
    if g.best.get(m):
        q1, q3 = np.percentile(g.best[m], [25, 75])
        text = f"{_fmt(g.median_best(m))} [{_fmt(q1)}, {_fmt(q3)}]"
        if len(g.best[m]) < max(len(v) for v in g.best.values()):
            text += f" ({len(g.best[m])} seeds)"
        return f"**{text}**" if winner else text
    if g.dnf.get(m):
        return f"DNF ({int(np.median(g.dnf[m]))}/{g.budget} evals)"
    return "–"


def checkpoint_medians(g: GroupStats, method: str,
                       checkpoints: tuple[int, ...] = CHECKPOINTS) -> dict[int, float | None]:
    """Per checkpoint below the budget, the median over ``method``'s seeds of its value
    after that many evaluations (:meth:`CellRun.value_at`), over the seeds whose cell
    reached it; None where none did (or, noisy, none had a recommendation scored by then)."""
    medians: dict[int, float | None] = {}
    for k in (k for k in checkpoints if k < g.budget):
        values = [r.value_at(k) for r in g.runs.get(method, {}).values() if r.evaluations >= k]
        values = [v for v in values if not np.isnan(v)]
        medians[k] = float(np.median(values)) if values else None
    return medians


def _checkpoint_cell(g: GroupStats, median: float | None, lowest: float | None) -> str:
    """A checkpoint median as a table cell: "–" where no seed reached it, bold when lowest."""
    if median is None:
        return "–"
    text = (_fmt_best if g.constraints else _fmt)(median)
    return f"**{text}**" if median == lowest else text


def listed_peers(g: GroupStats) -> list[str] | None:
    """The peers Auto is counted against in ``g`` (:data:`REFERENCE_PEERS` the suite lists
    for it), or None where the group lists no Auto or no such peer."""
    listed = g.listed or g.methods()
    peers = [m for m in listed if m in REFERENCE_PEERS]
    return peers if "auto" in listed and peers else None


def auto_verdict(g: GroupStats) -> dict[str, Any] | None:
    """Auto against every peer the suite lists for ``g`` (module docstring), or None where
    the group lists no Auto or no peer.

    ``status``: ``"won"``, ``"lost"`` (some peer's median at most Auto's), ``"incomplete"``
    (not lost, but Auto or a listed peer lacks cells) or ``"no auto cells"``. ``medians``:
    peer -> (Auto's median, the peer's), both at equal evaluations.
    """
    peers = listed_peers(g)
    if peers is None:
        return None
    if not g.runs.get("auto"):
        return {"status": "no auto cells", "peers": peers, "not_beaten": [], "missing": [],
                "medians": {}, "fewer_seeds": {}}
    medians, not_beaten, missing, fewer = {}, [], [], {}
    for p in peers:
        pair = g.medians_at_equal_evaluations(["auto", p])
        if pair is None:
            missing.append(p)
            continue
        medians[p] = (pair["auto"], pair[p])
        shared = len(g.shared_seeds(["auto", p]))
        if shared < len(g.runs["auto"]):
            fewer[p] = shared
        if not pair["auto"] < pair[p]:
            not_beaten.append(p)
    status = "lost" if not_beaten else "incomplete" if missing else "won"
    return {"status": status, "peers": peers, "not_beaten": not_beaten, "missing": missing,
            "medians": medians, "fewer_seeds": fewer}


def auto_floor(g: GroupStats) -> dict[str, bool | None]:
    """Auto's floor in ``g`` (module docstring): whether its median beats random search's
    (``"random"``), beats TPE's (``"optuna-tpe"``), and is at most the median of
    :data:`SINGLE_ALGORITHMS`' medians (``"single algorithms"``), each at equal evaluations;
    None where a method's cells are missing."""
    floor: dict[str, bool | None] = {}
    for other in FLOOR_PEERS:
        pair = g.medians_at_equal_evaluations(["auto", other])
        floor[other] = None if pair is None else pair["auto"] < pair[other]
    five = g.medians_at_equal_evaluations(["auto", *SINGLE_ALGORITHMS])
    floor["single algorithms"] = (
        None if five is None
        else bool(five["auto"] <= np.median([five[m] for m in SINGLE_ALGORITHMS])))
    return floor


def auto_win_share(g: GroupStats, draws: int = BOOTSTRAP_DRAWS, seed: int = 0) -> float | None:
    """The share of bootstrap resamples of the seeds in which Auto's median beats every
    listed peer's, each pair at equal evaluations on the seeds it shares; a resample draws
    seeds with replacement, the same draw for Auto and the peer (a seed is one problem
    instance) and for every pair with the same seeds. None where a listed peer or Auto has
    no shared seed."""
    peers = listed_peers(g)
    if peers is None:
        return None
    pairs = [g.values_at_equal_evaluations(["auto", p]) for p in peers]
    if any(pair is None for pair in pairs):
        return None
    keys = [tuple(sorted(g.shared_seeds(["auto", p]))) for p in peers]
    distinct = list(dict.fromkeys(keys))
    slots = [distinct.index(k) for k in keys]  # each pair's draw among the distinct seed sets

    def wins(drawn: list[np.ndarray]) -> bool:
        return all(np.median(pair["auto"][drawn[slot]]) < np.median(pair[p][drawn[slot]])
                   for p, pair, slot in zip(peers, pairs, slots, strict=True))

    return _bootstrap_share([len(k) for k in distinct], wins, draws, seed)


def _bootstrap_share(sizes: list[int], hit: Callable[[list[np.ndarray]], bool], draws: int,
                     seed: int) -> float:
    """The share of ``draws`` resamples for which ``hit`` holds; each resample draws, in
    order, one set of row indices with replacement per entry of ``sizes`` (the seeds a
    comparison shares), from one generator seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    return sum(bool(hit([rng.integers(0, n, n) for n in sizes])) for _ in range(draws)) / draws


def _at_most(a: float, b: float) -> bool:
    """``a <= b``, medians within a relative :data:`SAME_RUN_RTOL` counting as equal: the
    same run made on two CPUs' vector kernels differs in the last digits."""
    return bool(a <= b or np.isclose(a, b, rtol=SAME_RUN_RTOL, atol=0.0))


def _part_values(g: GroupStats) -> tuple[list[str], dict[str, np.ndarray]] | None:
    """The parts with cells in ``g`` and Auto's and their values per seed at equal
    evaluations on the seeds all share (:meth:`GroupStats.values_at_equal_evaluations`);
    None where Auto or every part lacks cells."""
    parts = [m for m in PARTS if g.runs.get(m)]
    if not parts or not g.runs.get("auto"):
        return None
    values = g.values_at_equal_evaluations(["auto", *parts])
    return None if values is None else (parts, values)


def auto_against_parts(g: GroupStats) -> dict[str, Any] | None:
    """Auto's median against its parts' (:data:`PARTS` with cells here), at equal
    evaluations on the seeds all of them share: ``best`` whether it is at most the best
    part's median, ``median`` whether at most the median of the parts' medians; ``parts``
    the parts compared. None where Auto or every part lacks cells (:func:`_at_most`)."""
    found = _part_values(g)
    if found is None:
        return None
    parts, values = found
    auto = float(np.median(values["auto"]))
    medians = [float(np.median(values[m])) for m in parts]
    return {"parts": parts, "best": _at_most(auto, min(medians)),
            "median": _at_most(auto, float(np.median(medians)))}


def auto_parts_share(g: GroupStats, draws: int = BOOTSTRAP_DRAWS, seed: int = 0
                     ) -> float | None:
    """The share of bootstrap resamples of the seeds in which Auto's median is at most the
    best part's (:func:`auto_against_parts`' ``best``); a resample draws the seeds with
    replacement, the same draw for Auto and every part. None where that comparison is."""
    found = _part_values(g)
    if found is None:
        return None
    parts, values = found

    def at_most_best(drawn: list[np.ndarray]) -> bool:
        rows = drawn[0]
        return _at_most(float(np.median(values["auto"][rows])),
                        min(float(np.median(values[m][rows])) for m in parts))

    return _bootstrap_share([len(values["auto"])], at_most_best, draws, seed)


def auto_leads_at(g: GroupStats, evaluation: int) -> bool | None:
    """Whether Auto's median at ``evaluation`` (a checkpoint: each pair at the fewer of it
    and what either reached) beats every listed peer's; None where the budget is not above
    it or a listed peer or Auto lacks cells."""
    peers = listed_peers(g)
    if peers is None or g.budget <= evaluation:
        return None
    leads = []
    for p in peers:
        pair = g.medians_at_equal_evaluations(["auto", p], at=evaluation)
        if pair is None:
            return None
        leads.append(pair["auto"] < pair[p])
    return all(leads)


def feasibility_verdict(g: GroupStats) -> dict[str, Any] | None:
    """In a constrained group that lists Auto: the listed peers that found a feasible point on
    some seed, and Auto's (seeds with a feasible point, seeds run); None elsewhere."""
    listed = g.listed or g.methods()
    if not g.constraints or "auto" not in listed:
        return None
    peers = [p for p in listed if p in REFERENCE_PEERS and any(g.feasible.get(p, {}).values())]
    auto = g.feasible.get("auto", {})
    return {"peers_feasible": peers, "auto": (sum(auto.values()), len(auto))}


def targets(groups: list[GroupStats]) -> dict[str, Any]:
    """Auto's count and floor per group; each of ours against random search and TPE; Auto's,
    MS-UCB's and CobBO's time per ask over Optuna GPSampler's, per group.

    ``auto``: group -> :func:`auto_verdict`, for the groups that list Auto and a peer.
    ``auto_floor``: group -> :func:`auto_floor`, for the groups where Auto has cells.
    ``auto_parts``: group -> :func:`auto_against_parts`, where Auto and a part have cells,
    with ``share``, :func:`auto_parts_share`.
    ``auto_leads``: checkpoint -> group -> :func:`auto_leads_at`, where it is defined.
    Each ``auto`` verdict also has ``share``, :func:`auto_win_share`.
    ``beats_random_and_tpe``: method -> (groups where its median is below both random
    search's and TPE's, groups where the three have every seed), at equal evaluations.
    ``feasibility``: group -> :func:`feasibility_verdict`, for the constrained groups.
    """
    verdicts = {g.name: v for g in groups if (v := auto_verdict(g)) is not None}
    for g in groups:
        if g.name in verdicts:
            verdicts[g.name]["share"] = auto_win_share(g)
    floors = {g.name: auto_floor(g) for g in groups if g.runs.get("auto")}
    parts = {g.name: v for g in groups if (v := auto_against_parts(g)) is not None}
    for g in groups:
        if g.name in parts:
            parts[g.name]["share"] = auto_parts_share(g)
    leads = {k: {g.name: v for g in groups if (v := auto_leads_at(g, k)) is not None}
             for k in CHECKPOINTS}
    floor = {}
    for m in ours():
        compared = [g.medians_at_equal_evaluations([m, *FLOOR_PEERS]) for g in groups]
        judged = [c for c in compared if c is not None]
        if judged:
            floor[m] = (sum(c[m] < min(c[p] for p in FLOOR_PEERS) for c in judged), len(judged))
    time_ratio = {}
    for m in ("auto", "msucb", "cobbo"):
        ratios = {g.name: g.time_ratio(m, "optuna-gp") for g in groups
                  if g.times.get(m) and g.times.get("optuna-gp")}
        if ratios:
            time_ratio[m] = ratios
    feasibility = {g.name: v for g in groups if (v := feasibility_verdict(g)) is not None}
    return {"auto": verdicts, "auto_floor": floors, "auto_parts": parts, "auto_leads": leads,
            "time_ratio_vs_optuna_gp": time_ratio, "beats_random_and_tpe": floor,
            "feasibility": feasibility}


_YES_NO = {True: "yes", False: "no", None: "n/a"}


def _auto_lines(tg: dict[str, Any]) -> list[str]:
    """The report's Auto count, its per-group verdicts and its floor (module docstring)."""
    verdicts, floors = tg["auto"], tg["auto_floor"]
    if not verdicts:
        return []
    statuses = [v["status"] for v in verdicts.values()]
    if all(s == "no auto cells" for s in statuses):
        return [f"Auto beats every peer's median on: not counted, Auto has no cells yet in "
                f"the {len(verdicts)} groups that list it.", ""]
    won, lost = statuses.count("won"), statuses.count("lost")
    incomplete = len(statuses) - won - lost
    median = ("median best feasible value" if tg["feasibility"]
              and set(tg["feasibility"]) == set(verdicts) else "median")
    firm = sum(v["status"] == "won" and (v.get("share") or 0.0) >= BOOTSTRAP_WIN
               for v in verdicts.values())
    lines = [f"Auto beats every peer's {median} on **{won} of {len(verdicts)}** groups"
             + (f" ({incomplete} incomplete: Auto's or a listed peer's cells missing, not "
                "counted as won)" if incomplete else "")
             + ". Every peer the suite lists for a group counts; a stopped cell is compared "
             f"at equal evaluations. Of those, **{firm}** are won in at least "
             f"{BOOTSTRAP_WIN:.0%} of bootstrap resamples of the seeds (the share per group "
             "below): a group won in fewer is within the seeds' spread.", ""]
    for group, v in verdicts.items():
        detail = ", ".join(f"{p} {_fmt_pair(a, b)}" for p, (a, b) in v["medians"].items())
        extra = ([f"not beaten: {', '.join(v['not_beaten'])}"] if v["not_beaten"] else []) + (
            [f"cells missing: {', '.join(v['missing'])}"] if v["missing"] else []) + (
            [f"compared on the seeds it has: {', '.join(f'{p} {n}' for p, n in fewer)}"]
            if (fewer := v["fewer_seeds"].items()) else [])
        share = "" if v.get("share") is None else f", bootstrap share {v['share']:.2f}"
        lines.append(f"- {group}: **{v['status']}**{share}"
                     + (f" ({'; '.join(extra)})" if extra else "")
                     + (f"; medians, Auto vs peer: {detail}" if detail else ""))
    if floors:
        lines += ["", "Auto's floor per group: a lower median than random search's and than "
                  "TPE's, and a median at most the median of the medians of "
                  f"{', '.join(SINGLE_ALGORITHMS)} (equal evaluations; n/a: cells missing).",
                  ""]
        for group, f in floors.items():
            lines.append(f"- {group}: beats random {_YES_NO[f['random']]}, beats TPE "
                         f"{_YES_NO[f['optuna-tpe']]}, at most the single algorithms' median "
                         f"{_YES_NO[f['single algorithms']]}")
        for key, label in (("random", "beats random search"), ("optuna-tpe", "beats TPE"),
                           ("single algorithms", "is at most the single algorithms' median")):
            judged = [f[key] for f in floors.values() if f[key] is not None]
            lines.append(f"- Auto {label} on {sum(judged)} of {len(judged)} groups")
    return [*lines, *_parts_lines(tg), *_feasibility_lines(tg["feasibility"]), ""]


def _parts_lines(tg: dict[str, Any]) -> list[str]:
    """Auto against its parts, and its leads at the checkpoints (module docstring)."""
    lines: list[str] = []
    parts = tg.get("auto_parts", {})
    if parts:
        best = sum(v["best"] for v in parts.values())
        median = sum(v["median"] for v in parts.values())
        firm = sum(v["best"] and v["share"] >= BOOTSTRAP_WIN for v in parts.values())
        lines += ["", f"Auto against its parts ({', '.join(PARTS)}, each alone, where they "
                  f"have cells; equal evaluations): at most the best part's median on "
                  f"**{best} of {len(parts)}** groups (**{firm}** in at least "
                  f"{BOOTSTRAP_WIN:.0%} of bootstrap resamples of the seeds, the share per "
                  f"group below), at most the parts' median on "
                  f"**{median} of {len(parts)}**.", ""]
        for group, v in parts.items():
            lines.append(f"- {group}: best part {_YES_NO[v['best']]} (bootstrap share "
                         f"{v['share']:.2f}), median part {_YES_NO[v['median']]} "
                         f"({', '.join(v['parts'])})")
    for k, leads in tg.get("auto_leads", {}).items():
        if leads:
            lines.append(f"- at evaluation {k}, Auto's median beats every listed peer's on "
                         f"{sum(leads.values())} of {len(leads)} groups"
                         + (f" (not: {', '.join(g for g, v in leads.items() if not v)})"
                            if not all(leads.values()) else ""))
    return lines


def _feasibility_lines(feasibility: dict[str, dict[str, Any]]) -> list[str]:
    """Whether Auto finds a feasible point on every seed of every constrained group where any
    listed peer finds one on some seed, and the detail per group."""
    if not feasibility:
        return []
    judged = {group: v for group, v in feasibility.items() if v["peers_feasible"]}
    answer = ("n/a: no peer found a feasible point" if not judged
              else "n/a: Auto has no cells" if any(v["auto"][1] == 0 for v in judged.values())
              else _YES_NO[all(found == run for found, run in
                               (v["auto"] for v in judged.values()))])
    lines = ["", "Auto finds a feasible point on every seed of every group where any peer "
             f"does: **{answer}**", ""]
    for group, v in feasibility.items():
        found, run = v["auto"]
        peers = ", ".join(v["peers_feasible"]) or "none"
        lines.append(f"- {group}: Auto on {found} of {run} seeds; peers with a feasible "
                     f"point on some seed: {peers}")
    return lines


def markdown_report(out: Path, plots: Path | None = None, relative_to: Path | None = None) -> str:
    """One ``##`` section of BENCHMARKS.md for the run in ``out``.

    A group's plot ``<plots>/<group>.png`` (default ``out/plots``) is linked
    when it exists, by a path relative to ``relative_to`` (the folder of the
    Markdown file).
    """
    from .bench import load_suite

    groups = load_results(out)
    plots = out / "plots" if plots is None else plots
    relative_to = out if relative_to is None else relative_to
    command_file = out / "command.txt"
    commands = command_file.read_text().splitlines() if command_file.exists() else ["unknown"]
    command = "`, `".join(dict.fromkeys(commands))
    suite_text = (out / "suite.toml").read_text() if (out / "suite.toml").exists() else ""
    cell_files = sorted((out / "cells").glob("*/*/seed*.json"))
    machines = {json.dumps(json.loads(p.read_text())["machine"], sort_keys=True)
                for p in cell_files}
    name = out.name
    counted = f"Cells finished: {len(cell_files)}"
    if suite_text:
        suite = load_suite(str(out / "suite.toml"))
        listed = {cell.paths(out)[1] for cell in suite.cells()}
        inside = sum(path in listed for path in cell_files)
        name, counted = suite.name, f"Cells finished: {inside} of {len(listed)}"
        if inside < len(cell_files):
            counted += (f", and {len(cell_files) - inside} of further seeds "
                        "(`hdbo bench --seeds N --first-seed K`)")
    lines = [f"## Suite `{name}`", "", f"Commands: `{command}`", "",
             f"{counted} (the suite's seeds times its problems and methods; a re-run of the "
             "command resumes the rest).", ""]
    for mach in sorted(machines):
        info = json.loads(mach)
        isa = f", {info['vector_isa']}" if "vector_isa" in info else ""
        lines.append(f"Machine: {info['cpu']}{isa}, {info['cores']} cores, "
                     f"{info['memory_gib']} GiB, Python {info['python']} ({info['platform']})")
    lines += _versions_lines(cell_files)
    loads = [json.loads(p.read_text()).get("load_average_1min") for p in cell_files]
    known = [v for v in loads if v is not None]
    if known:
        lines.append(f"\nLoad average (1 min) when cells finished: median {np.median(known):.1f}, "
                     f"max {max(known):.1f} over {len(known)} of {len(loads)} cells.")
    with_cpu = sum("ask_cpu_s" in _header(p.with_suffix(".csv")) for p in cell_files)
    lines += ["", "Value: median final best over seeds [interquartile range]; bold = lowest "
              "median. At 50, 100, 200 (the checkpoints below the budget): the median over "
              "the seeds that reached it of the value after that many evaluations (noisy "
              "groups: of the recommendation scored last before it); bold = lowest. Time: "
              "median optimizer seconds per evaluation (ask + tell, objective excluded): "
              f"CPU seconds of the cell's single thread for {with_cpu} of "
              f"{len(cell_files)} cells, wall-clock seconds (which other load inflates) for "
              "cells recorded before the CSVs had CPU columns. Memory: median peak RSS of "
              "the cell's process (MiB).", ""]
    for g in groups:
        present = g.methods()
        finished = [m for m in present if g.best.get(m)]
        winner = min(finished, key=g.median_best) if finished else None
        workers = f", {g.workers} workers" if g.workers > 1 else ""
        lines += [f"### {g.problem}, D = {g.dim}, {g.budget} evaluations{workers} ("
                  f"{'f_min' if g.f_min is not None else 'lowest value reached'} = "
                  f"{_fmt(g.f_ref)})", ""]
        if g.constraints:
            known = "" if g.best_known is None else f" Best known value: {g.best_known}."
            lines += [f"Constrained ({g.constraints} constraints, feasible iff all <= 0). "
                      "Value: the best feasible value (none: no feasible point); feasible: "
                      f"the seeds on which the method found a feasible point.{known}", ""]
        if g.noise is not None:
            lines += [f"Noisy: {g.noise}. Final value: the noise-free value of the point each "
                      "method recommends at the end (ours: `recommend()`; Optuna: the best "
                      "trial; Nevergrad: `provide_recommendation()`; BoTorch: the evaluated "
                      "point of highest posterior mean; random search and skopt: the best "
                      "draw), not the best noisy draw.", ""]
        at = {m: checkpoint_medians(g, m) for m in present}
        shown = [k for k in CHECKPOINTS if k < g.budget]
        lowest = {k: min((v[k] for v in at.values() if v[k] is not None), default=None)
                  for k in shown}
        lines += ["| method | " + "".join(f"at {k} | " for k in shown) + "final value | seeds "
                  "| CPU s / ask | total optimizer CPU s | peak RSS [MiB] |",
                  "|---|" + "---|" * len(shown) + "---|---|---|---|---|"]
        if g.constraints:
            lines[-2] = lines[-2].replace("final value | seeds", "best feasible value | "
                                          "feasible / seeds")
        for m in present:
            n_seeds = len(g.best.get(m, [])) + len(g.dnf.get(m, []))
            seeds = (f"{sum(g.feasible[m].values())} / {n_seeds}" if g.constraints
                     else str(n_seeds))
            early = "".join(f"{_checkpoint_cell(g, at[m][k], lowest[k])} | " for k in shown)
            lines.append(f"| {m} | {early}{_value_cell(g, m, m == winner)} | {seeds} | "
                         f"{_fmt(g.median_time(m))} | {_fmt(float(np.median(g.total[m])))} | "
                         f"{float(np.median(g.rss[m])):.0f} |")
        finished_ours = [m for m in ours() if g.best.get(m)]
        peers = [m for m in PEERS if m in present]
        if finished_ours and peers:
            best_ours = "auto" if "auto" in finished_ours else min(finished_ours,
                                                                   key=g.median_best)
            which = ("**auto**" if best_ours == "auto"
                     else f"our best here (picked afterwards), **{best_ours}**,")
            lines += ["", f"Ratios of {which} to each peer (regret = "
                      "value − f_min; < 1 is better for us):", "",
                      "| peer | regret ratio | time-per-ask ratio |", "|---|---|---|"]
            regret = g.median_best(best_ours) - g.f_ref
            for p in peers:
                peer_regret = g.median_best(p) - g.f_ref if g.best.get(p) else np.nan
                r = regret / peer_regret if np.inf > peer_regret > 0 else np.nan
                t = g.time_ratio(best_ours, p)
                lines.append(f"| {p} | {_fmt(r)} | {_fmt(t)} |")
        png = plots / f"{g.name}.png"
        if png.exists():
            lines += ["", f"![{g.name}]({os.path.relpath(png, relative_to)})"]
        lines.append("")
    tg = targets(groups)
    if tg["auto"] or tg["beats_random_and_tpe"] or tg["time_ratio_vs_optuna_gp"]:
        lines += [f"### Targets ({name})", "", *_auto_lines(tg)]
    for m, (won, judged) in tg["beats_random_and_tpe"].items():
        lines.append(f"- {m} has a lower median than both random search and Optuna TPE on "
                     f"{won} of {judged} groups (equal evaluations)")
    for m, ratios in tg["time_ratio_vs_optuna_gp"].items():
        lines.append(f"- {m} median time per ask / Optuna GPSampler's, per group: "
                     + ", ".join(f"{group} {r:.3f}" for group, r in ratios.items())
                     + " (over the evaluations both reached, so a DNF cell is compared on its "
                     "first evaluations)")
    lines += ["", f"### Suite definition ({name})", "", "```toml", suite_text.rstrip(), "```", ""]
    return "\n".join(lines)


def value_curves(g: GroupStats, method: str) -> tuple[np.ndarray, np.ndarray] | None:
    """What a group's convergence plot draws for ``method``: evaluations and, per seed, the
    value the group is ranked by there, up to the fewest evaluations any seed reached; None
    without cells.

    Deterministic groups: the best value so far at every evaluation. Noisy groups: the
    noise-free value of the recommendation at each checkpoint (:meth:`CellRun.value_at`),
    not the luckiest draw; None where a seed stopped before another's first checkpoint.
    """
    if g.noise is None:
        if not g.curves.get(method):
            return None
        n = min(len(c) for c in g.curves[method])
        return np.arange(1, n + 1), np.array([c[:n] for c in g.curves[method]])
    runs = [r for r in g.runs.get(method, {}).values()
            if r.true_trace is not None and len(r.true_trace)]
    if not runs:
        return None
    reached = min(r.evaluations for r in runs)
    x = np.unique(np.concatenate([r.true_trace[:, 0] for r in runs]))
    x = x[(x <= reached) & (x >= max(r.true_trace[0, 0] for r in runs))].astype(int)
    if not len(x):  # a seed stopped before another's first checkpoint
        return None
    return x, np.array([[r.value_at(int(e)) for e in x] for r in runs])


def value_axis(g: GroupStats) -> tuple[Callable[[np.ndarray], np.ndarray], str, str]:
    """How a group's convergence curves (:func:`value_curves`) are drawn: transform of the
    values, y label and y scale.

    Regret on a log scale where f_min is known; otherwise the value itself (log scale if
    every value is positive, else symlog), since regret from the lowest value reached would
    send the winner's curve to zero and squash every other one.
    """
    value = ("best value" if g.noise is None
             else "noise-free value of the recommendation")
    if g.f_min is not None:
        f_min = g.f_min
        return (lambda y: np.maximum(y - f_min, 1e-12), f"{value} − f_min (median, IQR)", "log")
    curves = [v for v in (value_curves(g, m) for m in sorted(set(g.curves) | set(g.runs)))
              if v is not None]
    positive = bool(curves) and min(float(np.nanmin(y)) for _, y in curves) > 0
    return (lambda y: y), f"{value} (median, IQR)", "log" if positive else "symlog"


def plot_results(out: Path, plot_dir: Path | None = None) -> list[Path]:
    """Per group: convergence (median and IQR over seeds of :func:`value_curves`) and time
    per ask, one PNG each.

    Written to ``plot_dir`` (default ``out/plots``) as ``<group>.png``; the value axis is
    :func:`value_axis`'s.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot_dir = out / "plots" if plot_dir is None else plot_dir
    plot_dir.mkdir(parents=True, exist_ok=True)
    files = []
    names = methods()
    colors = dict(zip(names, plt.cm.tab20(np.linspace(0, 1, len(names))), strict=True))
    for g in load_results(out):
        fig, (ax_v, ax_t) = plt.subplots(1, 2, figsize=(13, 4.8))
        transform, ylabel, yscale = value_axis(g)
        for m in g.methods():
            style = "-" if m in ours() else ("--" if m in PEERS else ":")
            curves = value_curves(g, m)
            if curves is not None:
                x, y = curves
                q1, med, q3 = np.percentile(transform(y), [25, 50, 75], axis=0)
                ax_v.step(x, med, style, where="post", color=colors[m], label=m,
                          lw=1.8 if m in ours() else 1.2)
                ax_v.fill_between(x, q1, q3, step="post", color=colors[m], alpha=0.15)
            if g.times.get(m):
                n = min(len(t) for t in g.times[m])
                med_t = np.median(np.array([t[:n] for t in g.times[m]]), axis=0)
                window = max(1, n // 50)
                smooth = np.convolve(med_t, np.ones(window) / window, mode="valid")
                ax_t.plot(np.arange(window, n + 1), smooth, style, color=colors[m], label=m)
        ax_v.set(yscale=yscale, xlabel="evaluation", ylabel=ylabel,
                 title=f"{g.problem}, D={g.dim}")
        ax_t.set(yscale="log", xlabel="evaluation", ylabel="CPU seconds per ask + tell (median)",
                 title="optimizer time per evaluation")
        ax_v.legend(fontsize=8, ncol=2)
        ax_t.legend(fontsize=8, ncol=2)
        fig.tight_layout()
        path = plot_dir / f"{g.name}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        files.append(path)
    return files

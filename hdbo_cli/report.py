"""Tables (``BENCHMARKS.md``) and plots (``hdbo plot``) from an ``hdbo bench`` output folder.

Statistics are over seeds: the median final best value with its
interquartile range, the median over all evaluations of all seeds of the
optimizer time per evaluation (ask + tell; CPU seconds, which a cell's single
thread makes equal to wall time on an idle core and which other load on the
machine does not inflate; wall seconds for cells recorded before the CSVs had
CPU columns), and the median peak memory.
Ratios against a peer divide our median *regret* (best value minus the
problem's known minimum, or minus the lowest value any method reached where
the minimum is unknown (BBOB), so it is positive whatever the sign of the values)
by the peer's, and our median time per ask by the peer's, both taken over
the evaluations every seed of both methods reached (time per ask grows with
the history, so a method stopped early is not flattered by its missing late
asks); below 1 means we are better. Only finished cells (status ``done``) enter the value tables; a
cell stopped by the suite's time limit is listed as DNF with the
evaluations it reached.
"""

from __future__ import annotations

import csv
import json
import os
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .bench import METHODS, OURS, PEERS


@dataclass
class GroupStats:
    """Per method: final bests, per-evaluation times, trajectories and statuses of one group."""

    problem: str
    dim: int
    budget: int
    f_min: float | None
    best: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    times: dict[str, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    curves: dict[str, list[np.ndarray]] = field(default_factory=lambda: defaultdict(list))
    rss: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    total: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    dnf: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))

    @property
    def name(self) -> str:
        return f"{self.problem}-D{self.dim}-n{self.budget}"

    def methods(self) -> list[str]:
        seen = set(self.best) | set(self.dnf)
        return [m for m in METHODS if m in seen]

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
    for json_path in sorted((out / "cells").glob("*/*/seed*.json")):
        s = json.loads(json_path.read_text())
        g = groups.setdefault(s["group"], GroupStats(s["problem"], s["dim"], s["budget"],
                                                     s["f_min"]))
        with open(json_path.with_suffix(".csv")) as fh:
            data = np.array([[float(r["best_so_far"]), _ask_tell_seconds(r)]
                             for r in csv.DictReader(fh)]).reshape(-1, 2)
        m = s["method"]
        g.times[m].append(data[:, 1])
        g.rss[m].append(s["peak_rss_mib"])
        g.total[m].append(s.get("optimizer_cpu_s", s["optimizer_time_s"]))
        g.curves[m].append(data[:, 0])  # a DNF curve is drawn as far as it got
        if s["status"] == "done":
            g.best[m].append(s["best"])
        else:
            g.dnf[m].append(s["evaluations"])
    return [groups[k] for k in sorted(groups)]


def _header(csv_path: Path) -> str:
    """First line of a cell CSV (its column names), without reading the rest."""
    with open(csv_path) as fh:
        return fh.readline()


def _ask_tell_seconds(row: dict[str, str]) -> float:
    """Optimizer seconds of one evaluation: CPU time where the CSV has it, else wall time."""
    if row.get("ask_cpu_s"):
        return float(row["ask_cpu_s"]) + float(row["tell_cpu_s"])
    return float(row["ask_s"]) + float(row["tell_s"])


def _fmt(v: float) -> str:
    if not np.isfinite(v):
        return "–"
    return f"{v:.4g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"


def _value_cell(g: GroupStats, m: str, winner: bool) -> str:
    if g.best.get(m):
        q1, q3 = np.percentile(g.best[m], [25, 75])
        text = f"{_fmt(g.median_best(m))} [{_fmt(q1)}, {_fmt(q3)}]"
        if len(g.best[m]) < max(len(v) for v in g.best.values()):
            text += f" ({len(g.best[m])} seeds)"
        return f"**{text}**" if winner else text
    if g.dnf.get(m):
        return f"DNF ({int(np.median(g.dnf[m]))}/{g.budget} evals)"
    return "–"


def targets(groups: list[GroupStats]) -> dict[str, object]:
    """Per group: our best method, whether it beats every peer's median; MS-UCB/CobBO time ratios.

    A peer that did not finish (DNF) or did not run is not counted as beaten.
    """
    wins, per_group = 0, {}
    for g in groups:
        ours = [m for m in OURS if g.best.get(m)]
        peers = [m for m in PEERS if m in g.methods()]
        if not ours or not peers:
            continue
        best_ours = min(ours, key=g.median_best)
        beaten = [p for p in peers if g.best.get(p) and g.median_best(best_ours) < g.median_best(p)]
        win = len(beaten) == len(peers)
        wins += win
        per_group[g.name] = {"best_ours": best_ours, "beats_all_peers": win,
                             "not_beaten": [p for p in peers if p not in beaten]}
    floor = {}  # issue 18: each of ours against random search and Optuna TPE
    for m in OURS:
        judged = [g for g in groups if g.best.get(m) and g.best.get("random")
                  and g.best.get("optuna-tpe")]
        if judged:
            floor[m] = (sum(g.median_best(m) < min(g.median_best("random"),
                                                   g.median_best("optuna-tpe"))
                            for g in judged), len(judged))
    time_ratio = {}
    for m in ("msucb", "cobbo"):
        ratios = [g.time_ratio(m, "optuna-gp") for g in groups
                  if g.times.get(m) and g.times.get("optuna-gp")]
        if ratios:
            time_ratio[m] = ratios
    return {"wins": wins, "groups": per_group, "time_ratio_vs_optuna_gp": time_ratio,
            "beats_random_and_tpe": floor}


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
    expected = ""
    if suite_text:
        suite = load_suite(str(out / "suite.toml"))
        name, expected = suite.name, f" of {len(suite.cells())}"
    lines = [f"## Suite `{name}`", "", f"Commands: `{command}`", "",
             f"Cells finished: {len(cell_files)}{expected} (the suite's seeds times its "
             "problems and methods; a re-run of the command resumes the rest).", ""]
    for mach in sorted(machines):
        info = json.loads(mach)
        lines.append(f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory_gib']} GiB, "
                     f"Python {info['python']} ({info['platform']})")
    loads = [json.loads(p.read_text()).get("load_average_1min") for p in cell_files]
    known = [v for v in loads if v is not None]
    if known:
        lines.append(f"\nLoad average (1 min) when cells finished: median {np.median(known):.1f}, "
                     f"max {max(known):.1f} over {len(known)} of {len(loads)} cells.")
    with_cpu = sum("ask_cpu_s" in _header(p.with_suffix(".csv")) for p in cell_files)
    lines += ["", "Value: median final best over seeds [interquartile range]; bold = lowest "
              "median. Time: median optimizer seconds per evaluation (ask + tell, objective "
              f"excluded): CPU seconds of the cell's single thread for {with_cpu} of "
              f"{len(cell_files)} cells, wall-clock seconds (which other load inflates) for "
              "cells recorded before the CSVs had CPU columns. Memory: median peak RSS of "
              "the cell's process (MiB).", ""]
    for g in groups:
        methods = g.methods()
        finished = [m for m in methods if g.best.get(m)]
        winner = min(finished, key=g.median_best) if finished else None
        lines += [f"### {g.problem}, D = {g.dim}, {g.budget} evaluations ("
                  f"{'f_min' if g.f_min is not None else 'lowest value reached'} = "
                  f"{_fmt(g.f_ref)})", "",
                  "| method | final value | seeds | CPU s / ask | total optimizer CPU s | "
                  "peak RSS [MiB] |", "|---|---|---|---|---|---|"]
        for m in methods:
            n_seeds = len(g.best.get(m, [])) + len(g.dnf.get(m, []))
            lines.append(f"| {m} | {_value_cell(g, m, m == winner)} | {n_seeds} | "
                         f"{_fmt(g.median_time(m))} | {_fmt(float(np.median(g.total[m])))} | "
                         f"{float(np.median(g.rss[m])):.0f} |")
        ours = [m for m in OURS if g.best.get(m)]
        peers = [m for m in PEERS if m in methods]
        if ours and peers:
            best_ours = min(ours, key=g.median_best)
            lines += ["", f"Ratios of our best here, **{best_ours}**, to each peer (regret = "
                      "value − f_min; < 1 is better for us):", "",
                      "| peer | regret ratio | time-per-ask ratio |", "|---|---|---|"]
            regret = g.median_best(best_ours) - g.f_ref
            for p in peers:
                peer_regret = g.median_best(p) - g.f_ref if g.best.get(p) else np.nan
                r = regret / peer_regret if peer_regret > 0 else np.nan
                t = g.time_ratio(best_ours, p)
                lines.append(f"| {p} | {_fmt(r)} | {_fmt(t)} |")
        png = plots / f"{g.name}.png"
        if png.exists():
            lines += ["", f"![{g.name}]({os.path.relpath(png, relative_to)})"]
        lines.append("")
    tg = targets(groups)
    if tg["groups"] or tg["time_ratio_vs_optuna_gp"]:  # a suite without peers has no targets here
        lines += [f"### Targets ({name})", "",
                  f"Groups where our best algorithm has a lower median final value than every "
                  f"peer: **{tg['wins']} of {len(tg['groups'])}**.", ""]
    for group, info in tg["groups"].items():
        verdict = "yes" if info["beats_all_peers"] else f"no (not beaten: {info['not_beaten']})"
        lines.append(f"- {group}: best of ours {info['best_ours']}; beats every peer: {verdict}")
    for m, (won, judged) in tg["beats_random_and_tpe"].items():
        lines.append(f"- {m} has a lower median than both random search and Optuna TPE on "
                     f"{won} of {judged} groups")
    for m, ratios in tg["time_ratio_vs_optuna_gp"].items():
        lines.append(f"- {m} median time per ask / Optuna GPSampler's, per group: "
                     + ", ".join(f"{r:.3f}" for r in ratios)
                     + " (over the evaluations both reached, so a DNF cell is compared on its "
                     "first evaluations)")
    lines += ["", f"### Suite definition ({name})", "", "```toml", suite_text.rstrip(), "```", ""]
    return "\n".join(lines)


def value_axis(g: GroupStats) -> tuple[Callable[[np.ndarray], np.ndarray], str, str]:
    """How a group's convergence curves are drawn: transform of the best-so-far values,
    y label and y scale.

    Regret on a log scale where f_min is known; otherwise the best value itself (log scale
    if every value is positive, else symlog), since regret from the lowest value reached
    would send the winner's curve to zero and squash every other one.
    """
    if g.f_min is not None:
        f_min = g.f_min
        return (lambda y: np.maximum(y - f_min, 1e-12),
                "best value − f_min (median, IQR)", "log")
    curves = [c for per_method in g.curves.values() for c in per_method]
    positive = bool(curves) and min(float(np.min(c)) for c in curves) > 0
    return (lambda y: y), "best value (median, IQR)", "log" if positive else "symlog"


def plot_results(out: Path, plot_dir: Path | None = None) -> list[Path]:
    """Per group: convergence (median and IQR over seeds) and time per ask, one PNG each.

    Written to ``plot_dir`` (default ``out/plots``) as ``<group>.png``; the value axis is
    :func:`value_axis`'s.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot_dir = out / "plots" if plot_dir is None else plot_dir
    plot_dir.mkdir(parents=True, exist_ok=True)
    files = []
    colors = dict(zip(METHODS, plt.cm.tab20(np.linspace(0, 1, len(METHODS))), strict=True))
    for g in load_results(out):
        fig, (ax_v, ax_t) = plt.subplots(1, 2, figsize=(13, 4.8))
        transform, ylabel, yscale = value_axis(g)
        for m in g.methods():
            style = "-" if m in OURS else ("--" if m in PEERS else ":")
            if g.curves.get(m):
                n = min(len(c) for c in g.curves[m])
                y = transform(np.array([c[:n] for c in g.curves[m]]))
                q1, med, q3 = np.percentile(y, [25, 50, 75], axis=0)
                x = np.arange(1, n + 1)
                ax_v.plot(x, med, style, color=colors[m], label=m, lw=1.8 if m in OURS else 1.2)
                ax_v.fill_between(x, q1, q3, color=colors[m], alpha=0.15)
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

"""``hdbo reproduce``: each paper's headline experiment in one command.

Every entry runs the engine algorithms with ``preset="paper"`` on the paper's
problems, writes ``OUT/NAME.json`` (its numbers) and ``OUT/NAME.png`` (the
figure to hold beside the paper's), and has a ``--quick`` version (fewer
iterations and seeds, under a minute) that the tests run. ``REPRODUCTIONS.md``
compares the full versions with the papers.

    msucb-tradeoff   MS-UCB Fig. 2/3: regret and compute as N0, alpha and d grow
    cobbo-speed      CobBO Fig. 1: time per iteration, CobBO vs full-space GP-UCB
    cobbo-ablation   CobBO Fig. 4/5: backoff rule, preference weights
    goucb-regret     GO-UCB Fig. 2: cumulative regret on the three 20-D functions
    bkb-cost         BKB: regret, m_t and time per step vs exact GP-UCB

Times are CPU seconds of this process (``time.process_time``) with one BLAS
and torch thread, so other load on the machine does not enter them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from hdbo_engine.base import Optimizer

Objective = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Reproduction:
    """One paper's headline result: ``module:function(quick) -> (numbers, figure)``."""

    name: str
    paper: str
    claim: str
    target: str

    def run(self, quick: bool) -> tuple[dict[str, Any], Any]:
        module, func = self.target.split(":")
        return getattr(import_module(f"{__name__}.{module}"), func)(quick)


REPRODUCTIONS: dict[str, Reproduction] = {r.name: r for r in [
    Reproduction("msucb-tradeoff", "MS-UCB (Tran-The et al., AAAI 2020), Fig. 2 and 3",
                 "regret falls as N0, alpha (Fig. 2) and d (Fig. 3) grow, at a higher compute "
                 "cost; Ackley and Hyper-Ellipsoid, D = 100", "msucb:tradeoff"),
    Reproduction("cobbo-speed", "CobBO (Tan et al.), Fig. 1 left",
                 "GP fit + acquisition per iteration about 13x faster than vanilla BO on "
                 "Rastrigin-50D on [-5, 10]^50 with 20 initial points", "cobbo:speed"),
    Reproduction("cobbo-ablation", "CobBO (Tan et al.), Fig. 4 right and Fig. 5",
                 "the backoff stopping rule beats fixed query budgets per subspace; the "
                 "preference concentrates on the active coordinates", "cobbo:ablation"),
    Reproduction("goucb-regret", "GO-UCB (Liu & Wang), Fig. 2",
                 "GO-UCB has lower cumulative regret than GP-UCB on the realizable f1, "
                 "Styblinski-Tang and Rastrigin in 20-D", "goucb:regret"),
    Reproduction("bkb-cost", "BKB (Calandriello et al., COLT 2019), Sec. 3-4",
                 "regret close to exact GP-UCB with m_t << t dictionary points and a time per "
                 "step that grows with m_t, not t", "bkb:cost"),
]}


def run_reproduction(name: str, quick: bool, out: Path) -> tuple[Path, Path]:
    """Run entry ``name``; write ``out/NAME.json`` and ``out/NAME.png``; return both paths."""
    entry = REPRODUCTIONS[name]
    start = time.perf_counter()
    with threadpool_limits(1):
        _torch_threads()
        numbers, figure = entry.run(quick)
    numbers = {"name": name, "paper": entry.paper, "paper_claim": entry.claim,
               "quick": quick, "wall_s": round(time.perf_counter() - start, 1), **numbers}
    out.mkdir(parents=True, exist_ok=True)
    json_path, png_path = out / f"{name}.json", out / f"{name}.png"
    json_path.write_text(json.dumps(numbers, indent=1, default=_plain) + "\n")
    figure.savefig(png_path, dpi=110, bbox_inches="tight")
    return json_path, png_path


def _torch_threads() -> None:
    """One torch thread, where torch is installed (GO-UCB)."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def _plain(value: Any) -> Any:
    """JSON form of numpy scalars and arrays."""
    return value.tolist() if isinstance(value, np.ndarray | np.generic) else str(value)


def run_loop(opt: Optimizer, f: Objective, budget: int,
             on_tell: Callable[[Optimizer], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``budget`` sequential ask/tell steps of ``opt`` on ``f`` (unit cube -> values).

    Returns the values and each ask's CPU seconds (the model fit and the
    acquisition maximisation happen inside ``ask``). ``on_tell`` sees ``opt``
    after every tell.
    """
    values, ask_s = np.empty(budget), np.empty(budget)
    for t in range(budget):
        t0 = time.process_time()
        (proposal,) = opt.ask()
        ask_s[t] = time.process_time() - t0
        values[t] = float(f(proposal.x[None])[0])
        opt.tell(proposal.x, values[t])
        if on_tell is not None:
            on_tell(opt)
    return values, ask_s


def figure(n_panels: int, rows: int = 1, width: float = 4.8,
           height: float = 3.6) -> tuple[Any, list[Any]]:
    """A matplotlib figure (Agg): ``rows`` rows of ``n_panels`` axes, as one flat list."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(rows, n_panels, figsize=(width * n_panels, height * rows),
                             squeeze=False)
    return fig, list(axes.ravel())


def band(ax: Any, x: np.ndarray, runs: np.ndarray, label: str, **style: Any) -> None:
    """Mean of ``runs`` (seeds x steps) with a band of one standard deviation."""
    mean, sd = runs.mean(0), runs.std(0)
    (line,) = ax.plot(x, mean, label=label, **style)
    if len(runs) > 1:
        ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.15)

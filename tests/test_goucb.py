"""Tests of GO-UCB (hdbo_engine.algorithms.goucb)."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from helpers import Capture, shifted_sphere, told_history

torch = pytest.importorskip("torch")

from hdbo_engine import get_algorithm  # noqa: E402
from hdbo_engine.algorithms.goucb import GOUCB, _LowRankBall  # noqa: E402
from hdbo_engine.space import Categorical, Integer, Real, Space  # noqa: E402

FAST = {"n_candidates": 64, "restarts": 2, "fit_restarts": 2, "fit_maxiter": 100}


def sphere(X: np.ndarray) -> np.ndarray:
    return ((np.atleast_2d(X) - 0.3) ** 2).sum(1)


def run(opt: GOUCB, f, n: int) -> None:
    for _ in range(n):
        (p,) = opt.ask()
        opt.tell(p.x, float(f(p.x)[0]))


def test_registry_and_contract() -> None:
    assert get_algorithm("goucb") is GOUCB
    opt = GOUCB(4, seed=1, budget=16, line_search=False, **FAST)  # Phase II right away
    assert opt.n_init == 4  # ceil(sqrt(16))
    assert opt.d_w == 25 * 4 + 25 + 25 + 1
    run(opt, sphere, 8)
    assert [m.get("phase") for m in opt.metas[4:]] == [2] * 4
    props = opt.ask(3)  # distinct, in the cube, pending
    X = np.array([p.x for p in props])
    assert X.shape == (3, 4) and (X >= 0).all() and (X <= 1).all()
    assert len({tuple(x) for x in X}) == 3
    assert len(opt.pending) == 3
    opt.tell(X, [1.0, np.nan, 2.0])  # a failure is recorded, never best
    assert opt.n_told == 11 and len(opt.pending) == 0
    assert np.isfinite(opt.best[1])
    (p,) = opt.ask()
    assert np.isfinite(p.meta["ucb"])


def test_paper_output_is_a_phase_two_query_drawn_uniformly() -> None:
    """Algorithm 1's output: one of the Phase II queries (the told points after the design),
    each with probability 1 / (number of Phase II queries); None before Phase II."""
    opt = GOUCB(3, seed=1, budget=16, n_init=4, init_design="uniform", line_search=False,
                **FAST)
    rng = np.random.default_rng(0)
    X1 = rng.random((4, 3))
    opt.tell(X1, sphere(X1), [{"init": True}] * 4)
    assert opt.paper_output(seed=0) is None  # the design only
    X2 = rng.random((5, 3))
    opt.tell(X2, sphere(X2))
    draws = np.array([opt.paper_output(seed=s) for s in range(500)])
    rows = [int(np.flatnonzero((X2 == x).all(axis=1))[0]) for x in draws]  # only Phase II rows
    counts = np.bincount(rows, minlength=5)
    assert counts.min() > 70 and counts.max() < 130  # 100 each expected (sd 9)


def test_default_n_init_without_budget() -> None:
    assert GOUCB(3, seed=0).n_init == 10  # ceil(sqrt(DEFAULT_HORIZON)) > 2 D + 1 = 7
    assert GOUCB(3, seed=0, n_init=3).n_init == 3


def test_mixed_space() -> None:
    space = Space([Real(0.0, 1.0), Integer(1, 5), Categorical(["a", "b", "c"])])
    opt = GOUCB(space, seed=0, budget=9, **FAST)
    rng = np.random.default_rng(0)
    for _ in range(6):
        (p,) = opt.ask()
        opt.tell(p.x, float(rng.normal()))
    assert opt.dim == 5 and opt.n_told == 6


def test_woodbury_matches_dense() -> None:
    rng = np.random.default_rng(0)
    d_w, lam = 12, 3.0
    ball = _LowRankBall(torch, d_w, lam, torch.device("cpu"))
    G = rng.normal(size=(20, d_w))  # more rows than d_w: also exercises buffer growth
    for g in G:
        ball.append(torch.as_tensor(g))
    Sigma = lam * np.eye(d_w) + G.T @ G  # eq. (3), dense
    v = rng.normal(size=d_w)
    Q = rng.normal(size=(5, d_w))
    np.testing.assert_allclose(ball.inv_apply(torch.as_tensor(v)).numpy(),
                               np.linalg.solve(Sigma, v), rtol=1e-9, atol=1e-12)
    dense_q = np.einsum("bi,ij,bj->b", Q, np.linalg.inv(Sigma), Q)
    np.testing.assert_allclose(ball.inv_norm_sq(torch.as_tensor(Q)).numpy(), dense_q,
                               rtol=1e-8)
    evals, evecs = np.linalg.eigh(Sigma)
    inv_sqrt = evecs @ np.diag(evals**-0.5) @ evecs.T
    np.testing.assert_allclose(ball.inv_sqrt_operator()(torch.as_tensor(Q)).numpy(),
                               Q @ inv_sqrt, rtol=1e-8, atol=1e-12)


def test_w_t_matches_dense_closed_form() -> None:
    """w_t of the replay equals eq. (5) evaluated densely."""
    opt = GOUCB(3, seed=2, budget=16, **FAST)
    run(opt, sphere, 9)
    opt._sync()
    p1 = opt._phase1
    end = opt._design_end()  # the end of Phase I
    w = p1["w0"].clone()
    grads, targets = [], []
    Sigma = opt.lam * np.eye(opt.d_w)
    b = opt.lam * p1["w0"].numpy()
    for i in range(end, opt.n_told):
        x = torch.as_tensor(opt.X[i])
        g, f = opt.model.grad_one(w, x)
        z = -(opt.y[i] - p1["mean"]) / p1["std"]
        grads.append(g.numpy())
        targets.append(float(g @ w + z - f))
        Sigma += np.outer(grads[-1], grads[-1])
        b = b + grads[-1] * targets[-1]
        w = torch.as_tensor(np.linalg.solve(Sigma, b))
    np.testing.assert_allclose(opt._w.numpy(), w.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(("preset", "acquisition", "restarts"), [
    ("paper", "linearized", 2), ("paper", "joint", 2), ("practical", "linearized", 0),
    ("practical", "linearized", 2), ("practical", "joint", 2)])
def test_rebuild_reproduces_next_proposal(preset: str, acquisition: str, restarts: int) -> None:
    """from_history rebuilds the Phase II state, the refits and the trust region exactly."""
    kw = dict(seed=5, budget=25, preset=preset, acquisition=acquisition, joint_steps=20,
              **{**FAST, "restarts": restarts, "refit_every": 3})
    opt = GOUCB(5, **kw)
    run(opt, sphere, 13)
    opt.tell(np.full(5, 0.9), np.nan)  # a failure in Phase II
    a = opt.ask(2)
    re = GOUCB.from_history(5, opt.X, opt.y, opt.metas, **kw)
    if preset == "practical":
        assert re.trust_region == opt.trust_region
    b = re.ask(2)
    for pa, pb in zip(a, b, strict=True):
        np.testing.assert_array_equal(pa.x, pb.x)
        assert pa.meta == pb.meta


def test_rebuild_takes_the_recorded_fits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asks record the Phase I fit once and each refit once; a rebuild fits nothing that is
    recorded for its own history, and proposes what a full replay (bare metas) does."""
    kw = dict(seed=5, budget=25, **{**FAST, "refit_every": 3})
    opt = GOUCB(5, **kw)
    run(opt, sphere, 14)
    phase1 = [m["goucb_phase1"]["n"] for m in opt.metas if "goucb_phase1" in m]
    refits = [m["goucb_refit"]["n"] for m in opt.metas if "goucb_refit" in m]
    assert len(phase1) == 1 and refits == sorted(set(refits)) and len(refits) >= 2
    expected = opt.ask()[0].x
    fits: list[int] = []
    real = GOUCB._least_squares
    monkeypatch.setattr(GOUCB, "_least_squares",
                        lambda self, w, X, *a: fits.append(len(X)) or real(self, w, X, *a))
    re = GOUCB.from_history(5, opt.X, opt.y, opt.metas, **kw)
    np.testing.assert_array_equal(re.ask()[0].x, expected)
    assert all(n > refits[-1] for n in fits)  # only refits after the latest recorded one
    fits.clear()
    bare = [{k: v for k, v in m.items() if not k.startswith("goucb_")} for m in opt.metas]
    replayed = GOUCB.from_history(5, opt.X, opt.y, bare, **kw)
    np.testing.assert_array_equal(replayed.ask()[0].x, expected)
    assert len(fits) >= kw["fit_restarts"] + len(refits)


def test_presets() -> None:
    """The paper preset is App. D.1's configuration; explicit options override a preset."""
    paper = GOUCB(6, seed=0, budget=100, preset="paper")
    o = paper.options
    assert (o.beta, paper.n_init, o.init_centre) == ("paper", 10, False)
    assert (o.hidden, paper.d_w, paper.lam) == (25, 25 * 8 + 1, 10.0 * np.log(100) ** 2)
    assert (o.refit_every, paper.trust_region) == (0, None)
    assert (o.acquisition, o.restarts, o.n_candidates) == ("linearized", 4, 256)
    practical = GOUCB(6, seed=0, budget=100)
    assert practical.preset == "practical" and practical.options.init_centre
    assert practical.trust_region is not None and practical.options.refit_every > 0
    mixed = GOUCB(6, seed=0, budget=100, preset="paper", trust_region=True, n_init=3)
    assert mixed.trust_region is not None and mixed.n_init == 3 and mixed.options.beta == "paper"
    for opt in (paper, practical):
        run(opt, sphere, 14)
        assert opt.n_told == 14 and np.isfinite(opt.best[1])
    assert not np.allclose(paper.X[0], 0.5) and np.allclose(practical.X[0], 0.5)


def test_trust_region_confines_step5() -> None:
    """Phase II proposals lie in the trust region around the incumbent, which shrinks
    after failure_tol failures."""
    opt = GOUCB(6, seed=1, budget=60, failure_tol=2, line_search=False, **FAST)
    run(opt, sphere, opt.n_init)
    checked = 0
    for _ in range(8):
        lower, upper = opt.trust_region.bounds(opt.best[0])
        (p,) = opt.ask()
        if not p.meta.get("duplicate_replaced"):  # base moves a repeat off the told point
            assert (p.x >= lower - 1e-12).all() and (p.x <= upper + 1e-12).all()
            checked += 1
        opt.tell(p.x, 100.0)  # never an improvement
    assert checked >= 4
    assert opt.trust_region.length == pytest.approx(0.8 / 16)


def test_refit_matches_dense_closed_form() -> None:
    """After a refit, Sigma holds every told point's gradient at the new w_0 and w_t is
    eq. (5) over them (dense check)."""
    opt = GOUCB(3, seed=2, budget=16, refit_every=3, **FAST)
    run(opt, sphere, 10)  # n_init = 4: refits after 3 and 6 Phase II points
    opt._sync()
    a = opt._anchor
    assert a["w0"] is not opt._phase1["w0"] and opt._ball.m == 10
    w0 = a["w0"].numpy()
    z = -(opt.y - a["mean"]) / a["std"]
    assert a["mean"] == pytest.approx(opt.y.mean())
    G = np.stack([opt.model.grad_one(a["w0"], torch.as_tensor(x))[0].numpy() for x in opt.X])
    f = np.array([float(opt.model.grad_one(a["w0"], torch.as_tensor(x))[1]) for x in opt.X])
    Sigma = opt.lam * np.eye(opt.d_w) + G.T @ G
    w = np.linalg.solve(Sigma, G.T @ (G @ w0 + z - f) + opt.lam * w0)
    np.testing.assert_allclose(opt._w.numpy(), w, rtol=1e-7, atol=1e-9)


def test_phase1_fit_is_cached() -> None:
    opt = GOUCB(3, seed=0, budget=16, line_search=False, **FAST)
    run(opt, sphere, 6)
    fit = opt._phase1
    run(opt, sphere, 2)
    assert opt._phase1 is fit  # not refitted on later asks


def test_phase1_fit_converges_on_realizable_data() -> None:
    """The oracle (eq. 2) interpolates a few points of a model of its own class."""
    opt = GOUCB(3, seed=0, budget=36, n_init=6, line_search=False)
    run(opt, lambda x: -np.tanh(np.atleast_2d(x).sum(1)), 7)
    assert opt._phase1["loss"] < 1e-6


def test_beats_random_on_a_small_problem() -> None:
    """On a function of the model's class (Sec. 6.1's realizable setting, 8-D), GO-UCB's
    median best after 20 evaluations over six seeds beats random search's (single seeds
    are noisy: it won 10 of 12 paired seeds when measured)."""
    D, evals = 8, 20
    direction = np.linspace(-1.0, 2.0, D)

    def realizable(X: np.ndarray) -> np.ndarray:
        return -np.tanh(0.5 * (np.atleast_2d(X) - 0.5) @ direction)

    ours, theirs = [], []
    for seed in range(6):
        opt = GOUCB(D, seed=seed, budget=evals, **FAST)
        run(opt, realizable, evals)
        rnd = get_algorithm("random")(D, seed=seed)
        run(rnd, realizable, evals)
        ours.append(opt.best[1])
        theirs.append(rnd.best[1])
    assert np.median(ours) < np.median(theirs), (ours, theirs)


def test_error_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "torch.func", None)
    with pytest.raises(ImportError, match=r'pip install "hdbo\[torch\]"'):
        GOUCB(3, seed=0)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"beta": "huge"}, "beta"),
    ({"beta": -1.0}, "beta"),
    ({"beta_scale": 0}, "beta_scale"),
    ({"lam": 0.0}, "lam"),
    ({"acquisition": "thompson"}, "acquisition"),
    ({"hidden": 0}, "hidden"),
    ({"n_candidates": 1.5}, "n_candidates"),
    ({"restarts": -1}, "restarts"),
    ({"refit_every": -1}, "refit_every"),
    ({"refit_maxiter": 0}, "refit_maxiter"),
    ({"failure_tol": 0}, "failure_tol"),
    ({"preset": "fast"}, "preset"),
    ({"budget": 0}, "budget"),
    ({"n_init": 0}, "n_init"),
    ({"joint_lr": 0.0}, "joint_lr"),
    ({"device": "not-a-device"}, "device"),
    ({"model_factory": lambda d: torch.nn.Linear(d, 2)}, "model_factory"),
])
def test_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GOUCB(3, seed=0, **kwargs)


def test_bad_trust_region_type() -> None:
    with pytest.raises(TypeError, match="trust_region"):
        GOUCB(3, seed=0, trust_region="yes")


def test_bad_factory_type() -> None:
    with pytest.raises(TypeError, match="model_factory"):
        GOUCB(3, seed=0, model_factory=lambda d: "not a module")
    with pytest.raises(TypeError, match="model_factory"):
        GOUCB(3, seed=0, model_factory=3)


def test_custom_model_factory() -> None:
    def factory(d: int) -> torch.nn.Module:
        return torch.nn.Sequential(torch.nn.Linear(d, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))

    opt = GOUCB(4, seed=0, budget=16, model_factory=factory, **FAST)
    assert opt.d_w == 4 * 8 + 8 + 8 + 1
    run(opt, sphere, 7)
    assert opt.n_told == 7


def test_closed_form_gradients_match_torch_func() -> None:
    """The default model's analytic grad_w f_x(w) equals torch.func's, and so do x-gradients."""
    opt = GOUCB(5, seed=3, budget=16, **FAST)
    model = opt.model
    assert model.two_layer
    gen = torch.Generator().manual_seed(0)
    w = model.flat_params() + 0.1 * torch.randn(model.d_w, generator=gen, dtype=torch.float64)
    X = torch.rand(7, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    f, G = model.values_and_grads(w, X)
    torch.testing.assert_close(f, model.values(w, X))
    torch.testing.assert_close(G, model.grads(w, X))
    W = w[None] + 0.1 * torch.randn(7, model.d_w, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(model.values_per_row(W, X), model.values_rowwise(W, X))
    Xa = X.clone().requires_grad_(True)
    Xb = X.clone().requires_grad_(True)
    (ga,) = torch.autograd.grad((model.values_and_grads(w, Xa)[1] ** 2).sum(), Xa)
    (gb,) = torch.autograd.grad((model.grads(w, Xb) ** 2).sum(), Xb)
    torch.testing.assert_close(ga, gb)


def test_pickle_round_trip_keeps_the_next_proposal() -> None:
    import pickle

    opt = GOUCB(4, seed=7, budget=16, **FAST)
    run(opt, sphere, 7)
    clone = pickle.loads(pickle.dumps(opt))
    np.testing.assert_array_equal(opt.ask()[0].x, clone.ask()[0].x)


def test_beta_t_in_each_mode() -> None:
    """Practical: beta_scale (1 + t / T); paper (App. D.1): d_w^3 F^4 t / T, with F = 1
    before the Phase I fit; a number is used as it is."""
    practical = GOUCB(2, seed=0, budget=50, beta_scale=2.0)
    assert practical.beta(5) == pytest.approx(2.0 * (1 + 5 / 50))
    paper = GOUCB(2, seed=0, budget=50, beta="paper")
    d_w = 25 * 2 + 25 + 25 + 1
    assert paper.d_w == d_w
    assert paper.beta(3) == pytest.approx(d_w**3 * 3 / 50)
    assert GOUCB(2, seed=0, budget=50, beta=0.7).beta(9) == 0.7


def test_step5_candidates_and_region() -> None:
    """Without a trust region: the incumbent, c // 4 local draws N(0, 0.1) clipped to the
    cube, then uniform draws; with one: TuRBO's perturbations inside the region, which is
    the box of side 0.8 around the incumbent."""
    plain = GOUCB(3, seed=0, budget=40, trust_region=False, n_candidates=400)
    X = np.random.default_rng(1).random((5, 3))
    plain.tell(X, sphere(X))
    inc = X[int(np.argmin(sphere(X)))]
    lo, hi = plain._region()
    np.testing.assert_array_equal(lo, 0.0)
    np.testing.assert_array_equal(hi, 1.0)
    C = plain._candidates(np.random.default_rng(2), lo, hi)
    assert C.shape == (400, 3)
    np.testing.assert_array_equal(C[0], inc)
    step = C[1:101] - inc
    assert np.abs(step).max() < 0.6 and np.std(step[np.abs(C[1:101] - 0.5) < 0.49]) < 0.15
    assert (C >= 0).all() and (C <= 1).all()
    assert np.std(C[101:]) == pytest.approx(np.sqrt(1 / 12), rel=0.1)
    boxed = GOUCB(3, seed=0, budget=40, n_candidates=50)
    assert boxed._region()[0].tolist() == [0.0] * 3  # nothing told: the cube
    boxed.tell(X, sphere(X), [{"init": True}] * 5)  # the design: the side stays 0.8
    lo, hi = boxed._region()
    np.testing.assert_allclose(lo, np.clip(inc - 0.4, 0, 1))
    np.testing.assert_allclose(hi, np.clip(inc + 0.4, 0, 1))
    C = boxed._candidates(np.random.default_rng(3), lo, hi)
    assert C.shape == (50, 3) and (C >= lo).all() and (C <= hi).all()
    assert ((C != inc).sum(1) >= 1).all()


def test_phase_two_batch_counts_t_and_records_the_fit_once() -> None:
    opt = GOUCB(2, seed=3, budget=20, n_init=4, init_design="uniform", line_search=False,
                **FAST)
    X = np.random.default_rng(4).random((6, 2))
    opt.tell(X[:4], sphere(X[:4]), [{"init": True}] * 4)
    opt.tell(X[4:], sphere(X[4:]))  # two Phase II points
    batch = opt.ask(3)
    assert [p.meta["t"] for p in batch] == [3, 4, 5]
    assert all(p.meta["phase"] == 2 for p in batch)
    assert "goucb_phase1" in batch[0].meta
    assert all("goucb_phase1" not in p.meta for p in batch[1:])
    (after,) = opt.ask()  # pending points count, and the fit is recorded already
    assert after.meta["t"] == 6 and "goucb_phase1" not in after.meta


def test_phase_one_incomplete_gives_uniform_points() -> None:
    opt = GOUCB(2, seed=0, budget=20, n_init=3, **FAST)
    opt.tell(np.array([[0.5, 0.5], [0.2, 0.2], [0.1, 0.9]]), [1.0, np.nan, 2.0],
             [{"init": True}] * 3)  # two finite values: Phase I needs three
    out = opt._propose(2, np.random.default_rng(0))
    assert [meta for _, meta in out] == [{"phase": 1}] * 2
    for x, _ in out:  # a point of the unit square each
        assert x.shape == (2,) and np.all((x >= 0) & (x <= 1))


def test_joint_ascent_stays_in_its_box() -> None:
    """App. D.1's projected ascent: every iterate is projected onto [lower, upper], so the
    point returned lies in the box even with long steps."""
    opt = GOUCB(3, seed=2, budget=30, n_init=5, init_design="uniform", line_search=False,
                acquisition="joint", joint_steps=8, joint_lr=0.5, **FAST)
    X = np.random.default_rng(5).random((8, 3))
    opt.tell(X[:5], sphere(X[:5]), [{"init": True}] * 5)
    opt.tell(X[5:], sphere(X[5:]))
    opt.ask()  # brings the Phase II state up to date
    lower, upper = np.full(3, 0.45), np.full(3, 0.55)
    starts = np.random.default_rng(6).uniform(0.45, 0.55, (16, 3))
    for k in range(16):
        x, value = opt._joint_ascent(opt._ball, opt._w, opt.beta(4), starts[k:k + 1],
                                     lower, upper)
        assert np.all((x >= lower - 1e-12) & (x <= upper + 1e-12)) and np.isfinite(value)


def test_a_non_finite_score_is_never_the_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates whose bound is not finite score -inf in step 5."""
    opt = GOUCB(2, seed=1, budget=20, n_init=4, init_design="uniform", line_search=False,
                trust_region=False, n_candidates=16, restarts=0, fit_restarts=1,
                fit_maxiter=50)
    X = np.random.default_rng(2).random((4, 2))
    opt.tell(X, sphere(X), [{"init": True}] * 4)
    real = GOUCB._ucb

    def nan_first(self, ball, w, beta, Xt):
        scores = real(self, ball, w, beta, Xt).clone()
        scores[0] = float("nan")  # the incumbent, first of the candidates
        return scores

    monkeypatch.setattr(GOUCB, "_ucb", nan_first)
    (p,) = opt.ask()
    assert np.isfinite(p.meta["ucb"])
    assert not np.array_equal(p.x, X[int(np.argmin(sphere(X)))])


@pytest.mark.parametrize("run, refits", [(6, [10]), (2, [6])])
def test_a_refit_due_in_a_run_without_metas_happens_once_at_its_end(
        monkeypatch: pytest.MonkeyPatch, run: int, refits: list[int]) -> None:
    """refit_every=2: a refit falls due two Phase II points after the design; the points
    told without a meta are one run, so the oracle is refitted once, at the run's end,
    warm-started from the anchor."""
    opt = GOUCB(2, seed=0, budget=30, n_init=4, init_design="uniform", line_search=False,
                refit_every=2, **FAST)
    X = np.random.default_rng(3).random((4 + run, 2))
    opt.tell(X[:4], sphere(X[:4]), [{"init": True}] * 4)
    opt.tell(X[4:], sphere(X[4:]))  # no metas: a warm start
    calls = []
    real = GOUCB._refit
    monkeypatch.setattr(GOUCB, "_refit", lambda self, n, y, start=None: calls.append(
        (n, start is not None)) or real(self, n, y, start))
    (p,) = opt.ask()
    assert calls == [(n, True) for n in refits]
    assert p.meta["t"] == run + 1

# ------------------------------------------------ Phase II, recomputed from the paper


def _network(w: np.ndarray, x: np.ndarray, D: int, H: int) -> tuple[float, np.ndarray]:
    """Sec. 6's model ``f_w(x) = v . sigmoid(W1 (2x - 1) + b1) + c`` and its gradient in w,
    with w laid out as (W1 row by row, b1, v, c)."""
    W1, b1 = w[:H * D].reshape(H, D), w[H * D:H * D + H]
    v, c = w[H * D + H:H * D + 2 * H], w[-1]
    u = 2.0 * x - 1.0
    h = 1.0 / (1.0 + np.exp(-(W1 @ u + b1)))
    s = v * h * (1.0 - h)
    return float(v @ h + c), np.concatenate([np.outer(s, u).ravel(), s, h, [1.0]])


@pytest.mark.parametrize("restarts, acquisition", [(0, "linearized"), (2, "linearized"),
                                                  (2, "joint")])
def test_goucb_phase_two_selects_the_optimistic_point_of_eqs_3_to_7(monkeypatch, restarts,
                                                                    acquisition):
    """restarts=0: the best candidate; restarts=2: L-BFGS-B from the two best candidates,
    and the best result; "joint": projected ascent over (x, w in Ball_t) from them, whose
    first step already evaluates w + sqrt(beta) Sigma^-1 g / ||g||_Sigma^-1 (App. D.1)."""
    pytest.importorskip("torch")
    from hdbo_engine.algorithms import goucb as goucb_module
    from hdbo_engine.algorithms.goucb import GOUCB

    D, H, T, n_init = 3, 25, 50, 6
    opt = GOUCB(D, seed=0, budget=T, n_init=n_init, init_design="uniform", line_search=False,
                fit_restarts=1, fit_maxiter=60, refit_every=0, trust_region=False,
                restarts=restarts, n_candidates=64, acquisition=acquisition, joint_steps=3,
                joint_lr=0.3)
    told_history(opt, shifted_sphere, n_init, seed=4)
    X2 = np.random.default_rng(6).random((4, D))  # Phase II observations
    opt.tell(X2, [shifted_sphere(x) for x in X2])
    capture = Capture(GOUCB._candidates)
    monkeypatch.setattr(GOUCB, "_candidates", lambda self, *a: capture(self, *a))
    runs = Capture(goucb_module.lbfgsb_batch)
    monkeypatch.setattr(goucb_module, "lbfgsb_batch", runs)
    (p,) = opt.ask()
    cand = capture.returned

    # Phase I: the oracle w_0 (read from the fit), on z = -(y - mean) / std of Phase I
    w0 = opt._phase1["w0"].numpy()
    y1 = opt.y[:n_init]
    mean, std = y1.mean(), y1.std()
    lam = math.sqrt(T) * math.log(T) ** 2  # App. D.1
    # Phase II: eq. (3) Sigma_t and eq. (5) w_t, one observation at a time
    Sigma, b, w = lam * np.eye(len(w0)), np.zeros(len(w0)), w0.copy()
    for x, y in zip(X2, opt.y[n_init:], strict=True):
        f, g = _network(w, x, D, H)
        Sigma += np.outer(g, g)
        b += g * (g @ w + (-(y - mean) / std) - f)
        w = np.linalg.solve(Sigma, b + lam * w0)
    t = len(X2) + 1
    beta = 1.0 + t / T  # the practical beta_t, beta_scale = 1

    def ucb_at(x):
        f, g = _network(w, x, D, H)
        return f + math.sqrt(beta) * math.sqrt(g @ np.linalg.solve(Sigma, g))

    scores = [ucb_at(x) for x in cand]
    if restarts == 0:
        assert runs.calls == []
        k = int(np.argmax(scores))
        np.testing.assert_array_equal(p.x, cand[k])
        assert p.meta["ucb"] == pytest.approx(scores[k], rel=1e-6)
        return
    if acquisition == "joint":
        assert runs.calls == [] and np.all((p.x >= 0) & (p.x <= 1))
        first_steps = []
        for x in cand[np.argsort(scores)[::-1][:2]]:
            _, g = _network(w, x, D, H)
            direction = np.linalg.solve(Sigma, g)
            W0 = w + math.sqrt(beta) * direction / math.sqrt(g @ direction)
            first_steps.append(_network(W0, x, D, H)[0])
        assert p.meta["ucb"] > max(first_steps) + 1e-6  # the ascent improved on its start
        # any w in Ball_t has ||w - w_t|| <= sqrt(beta / lambda_min(Sigma)) <= sqrt(beta / lam),
        # and |f_w(x)| <= ||v||_1 + |c| with sigmoid units in [0, 1]
        v, c = w[H * D + H:H * D + 2 * H], w[-1]
        bound = np.abs(v).sum() + abs(c) + math.sqrt(H + 1) * math.sqrt(beta / lam)
        assert p.meta["ucb"] <= bound
        return
    ((starts, lo, hi),) = [call[1:4] for call in runs.calls]
    np.testing.assert_array_equal(starts, cand[np.argsort(scores)[::-1][:2]])
    np.testing.assert_array_equal(lo, 0.0)
    np.testing.assert_array_equal(hi, 1.0)
    Y, vals = runs.returned
    np.testing.assert_array_equal(p.x, Y[int(np.argmax(vals))])
    assert p.meta["ucb"] == pytest.approx(ucb_at(p.x), rel=1e-6)
    assert p.meta["ucb"] >= max(scores) - 1e-9

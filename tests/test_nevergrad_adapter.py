"""Unit tests of the Nevergrad adapter (hdbo_adapters/nevergrad.py)."""

from __future__ import annotations

import importlib
import pickle
import warnings

import nevergrad as ng
import numpy as np
import pytest
from nevergrad.common import errors as ng_errors
from scipy.stats import norm

import hdbo_adapters.nevergrad as H
from hdbo_engine import available, minimize
from hdbo_engine.registry import get_algorithm, register, unregister

REGISTERED = {"HDBO": "auto", "MSUCB": "msucb", "CobBO": "cobbo", "GOUCB": "goucb",
              "BKB": "bkb"}
PRESENT = set(available())
# Every engine algorithm the adapter is generic over; absent modules are skipped.
ALGORITHMS = [pytest.param(a, marks=pytest.mark.skipif(a not in PRESENT,
                                                       reason=f"engine module {a} not present"))
              for a in ("auto", "msucb", "cobbo", "goucb", "bkb", "gpucb", "random")]
OURS = [pytest.param(n, marks=pytest.mark.skipif(a not in PRESENT,
                                                 reason=f"engine module {a} not present"))
        for n, a in REGISTERED.items()]


def sphere(x: np.ndarray) -> float:
    return float(np.sum((np.asarray(x) - 0.3) ** 2))


# ------------------------------------------------------------- registration
def test_import_registers_every_public_algorithm() -> None:
    assert set(H.families()) == set(REGISTERED)
    for name, family in H.families().items():
        entry = ng.optimizers.registry[name]
        assert isinstance(entry, family)
        assert entry.name == name
        assert entry.config()["algorithm"] == REGISTERED[name]


def test_registering_twice_does_not_crash() -> None:
    H.register()
    module = importlib.reload(H)
    for name in REGISTERED:
        entry = ng.optimizers.registry[name]
        assert type(entry) is module.families()[name]  # the reloaded module's class
    opt = ng.optimizers.registry["MSUCB"](parametrization=2, budget=5)
    assert opt.name == "MSUCB"


def test_foreign_registry_entry_is_left_alone() -> None:
    registry = ng.optimizers.registry
    saved = registry["BKB"]
    registry.unregister("BKB")
    registry.register_name("BKB", ng.optimizers.RandomSearch)
    try:
        with pytest.warns(RuntimeWarning, match="BKB"):
            H.register()
        assert registry["BKB"] is ng.optimizers.RandomSearch
    finally:
        registry.unregister("BKB")
        registry.register_name("BKB", saved)


def test_configured_family_repr_equality_and_options() -> None:
    fam = H.ParametrizedMSUCB(d=10, alpha=1)
    assert repr(fam) == "ParametrizedMSUCB(alpha=1, d=10)"
    assert fam.__class__(**fam._config) == fam
    assert fam != H.ParametrizedMSUCB(d=9, alpha=1)
    assert repr(H.ParametrizedMSUCB()) == "ParametrizedMSUCB()"
    generic = H.ParametrizedHDBO("gpucb", seed=3)
    assert repr(generic) == "ParametrizedHDBO(algorithm='gpucb', seed=3)"
    opt = fam(parametrization=30, budget=50)
    assert opt.name == "ParametrizedMSUCB(alpha=1, d=10)"
    opt.tell(opt.ask(), 1.0)
    assert opt.engine.d == 10 and opt.engine.options.alpha == 1.0
    assert opt.engine.budget == 50


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: H.ParametrizedMSUCB(d=-1), ValueError),
        (lambda: H.ParametrizedMSUCB(budget=3), TypeError),
        (lambda: H.ParametrizedMSUCB(unbounded="uniform"), ValueError),
        (lambda: H.ParametrizedMSUCB(seed=-2), ValueError),
        (lambda: H.ParametrizedHDBO("nope"), ValueError),
        (lambda: H.ParametrizedHDBO(3), TypeError),
        (lambda: H.HDBOOptimizer(2, budget=5, algorithm="msucb", num_workers=1, space=2),
         TypeError),
    ],
)
def test_bad_options_raise_clear_errors(make, error) -> None:
    with pytest.raises(error):
        make()


def test_missing_engine_module_fails_at_construction() -> None:
    """An algorithm registered in the engine whose module this installation lacks."""
    register("ghost", "ghost:Ghost")  # there is no hdbo_engine.algorithms.ghost
    try:
        with pytest.raises(ImportError, match="'ghost' is registered but its engine module"):
            H.HDBOOptimizer(2, budget=10, algorithm="ghost")
    finally:
        unregister("ghost")


# ------------------------------------------------------------ space mapping
def test_bounded_arrays_map_exactly() -> None:
    param = ng.p.Array(shape=(3,)).set_bounds(-2.0, 5.0)
    opt = H.ParametrizedMSUCB()(param, budget=10)
    x = np.array([0.0, 0.25, 1.0])
    cand = param.spawn_child().set_standardized_data(opt.from_unit(x))
    np.testing.assert_allclose(cand.value, -2.0 + 7.0 * x, atol=1e-12)
    np.testing.assert_allclose(
        opt.to_unit(cand.get_standardized_data(reference=param)), x, atol=1e-12)
    log = ng.p.Log(lower=1e-3, upper=10.0)
    opt = H.ParametrizedMSUCB()(log, budget=10)
    cand = log.spawn_child().set_standardized_data(opt.from_unit([0.75]))
    assert cand.value == pytest.approx(10 ** (-3 + 0.75 * 4), rel=1e-9)


@pytest.mark.parametrize("unbounded", ["gaussian", "cauchy"])
def test_unbounded_arrays_use_the_documented_transform(unbounded: str) -> None:
    param = ng.p.Array(init=[5.0, -1.0, 0.0])
    opt = H.HDBOOptimizer(param, budget=10, unbounded=unbounded, unbounded_scale=1.0)
    dist = norm if unbounded == "gaussian" else __import__("scipy.stats").stats.cauchy
    u = np.array([0.5, 0.2, 0.9])
    data = opt.from_unit(u)
    np.testing.assert_allclose(data, dist.ppf(u), rtol=1e-9)
    value = param.spawn_child().set_standardized_data(data).value
    np.testing.assert_allclose(value, np.array([5.0, -1.0, 0.0]) + dist.ppf(u), rtol=1e-9)
    np.testing.assert_allclose(opt.to_unit(data), u, rtol=1e-9)
    faces = opt.from_unit([0.0, 1.0, 0.5])
    assert np.all(np.isfinite(faces))
    if unbounded == "gaussian":
        np.testing.assert_allclose(np.abs(faces[:2]), 6.0, atol=0.01)
    # told points far outside the reach are clipped onto the faces
    assert opt.to_unit(np.array([1e40, -1e40, 0.0])).tolist() == pytest.approx([1, 0, 0.5],
                                                                             abs=1e-8)


def test_unbounded_scale_shrinks_the_transform() -> None:
    family = H.ParametrizedMSUCB(unbounded_scale=0.5)
    assert repr(family) == "ParametrizedMSUCB(unbounded_scale=0.5)"
    opt = family(ng.p.Array(init=[2.0, 0.0]), budget=10)
    np.testing.assert_allclose(opt.from_unit([0.5, norm.cdf(1.0)]), [0.0, 0.5], atol=1e-12)
    with pytest.raises(ValueError, match="unbounded_scale"):
        H.ParametrizedMSUCB(unbounded_scale=0)


def test_auto_scale_is_nevergrads_metarecentering_rule() -> None:
    assert H.auto_scale(100, 30) == pytest.approx((1 + np.log(100)) / (4 * np.log(30)))
    assert H.auto_scale(None, 30) == 1.0 and H.auto_scale(100, 1) == 1.0
    assert H.auto_scale(300, 2) == 1.0  # capped: Nevergrad's rule would give 2.4
    opt = H.ParametrizedMSUCB()(30, budget=100)  # "auto" is the default
    assert opt.unbounded_scale == pytest.approx(H.auto_scale(100, 30))
    np.testing.assert_allclose(opt.from_unit(np.full(30, norm.cdf(1.0)))[0],
                               H.auto_scale(100, 30), rtol=1e-9)
    # MetaRecentering (Nevergrad's recentered sampler) uses the same transform
    ref = ng.optimizers.registry["MetaRecentering"](30, budget=100)
    ref.ask()
    assert ref.scale == pytest.approx(opt.unbounded_scale)


def _mixed_parametrization() -> ng.p.Instrumentation:
    return ng.p.Instrumentation(
        ng.p.Array(shape=(2,), lower=-1.0, upper=1.0),
        n=ng.p.Scalar(lower=0, upper=10).set_integer_casting(),
        c=ng.p.Choice(["a", "b", "c"], deterministic=True),
    )


def _mixed_loss(x: np.ndarray, n: int, c: str) -> float:
    return float(np.sum((x - 0.2) ** 2) + 0.1 * (n - 3) ** 2 + (0.0 if c == "b" else 1.0))


@pytest.mark.parametrize("algorithm", ["msucb", "gpucb"])
def test_mixed_instrumentation_is_handled(algorithm: str) -> None:
    param = _mixed_parametrization()
    opt = H.ParametrizedHDBO(algorithm, seed=1, n_init=8)(param, budget=30)
    seen = []
    for _ in range(30):
        cand = opt.ask()
        (x,), kw = cand.value
        assert isinstance(kw["n"], int) and 0 <= kw["n"] <= 10
        assert kw["c"] in ("a", "b", "c") and np.all(np.abs(x) <= 1.0)
        seen.append(kw["c"])
        opt.tell(cand, _mixed_loss(x, **kw))
    assert set(seen) == {"a", "b", "c"}
    rec = opt.provide_recommendation()
    assert rec.kwargs["c"] == "b"
    assert _mixed_loss(*rec.args, **rec.kwargs) < 0.5


def test_stochastic_choice_warns() -> None:
    param = ng.p.Instrumentation(c=ng.p.Choice(["a", "b"]))
    with pytest.warns(ng_errors.InefficientSettingsWarning, match="deterministic=True"):
        H.ParametrizedMSUCB()(param, budget=10)


# --------------------------------------------------------- ask / tell rules
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_same_points_as_native_engine_loop(algorithm: str) -> None:
    """Same seed, same continuous problem: the adapter proposes the native loop's points.

    Nevergrad's bounded-array map reproduces the cube point up to one ulp; the
    objective rounds to 12 decimals so both loops see identical losses.
    """
    dim, budget, seed = 4, 12, 7
    param = ng.p.Array(shape=(dim,), lower=0.0, upper=1.0)
    opt = H.ParametrizedHDBO(algorithm, seed=seed, n_init=6)(param, budget=budget)

    def objective(x: np.ndarray) -> float:
        return sphere(np.round(np.asarray(x, dtype=float), 12))

    asked = []
    for _ in range(budget):
        cand = opt.ask()
        asked.append(cand.value)
        opt.tell(cand, objective(cand.value))
    native = minimize(objective, dim, algorithm, budget=budget, seed=seed, n_init=6,
                      progress=False)
    np.testing.assert_allclose(np.array(asked), native.X_unit, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(opt.engine.X, native.X_unit)
    np.testing.assert_array_equal(opt.engine.y, native.func_vals)


def test_same_points_as_native_loop_through_the_unbounded_transform() -> None:
    dim, budget, seed = 3, 10, 2
    opt = H.ParametrizedMSUCB(seed=seed, n_init=5, unbounded_scale=1.0)(dim, budget=budget)
    datas = []
    for _ in range(budget):
        cand = opt.ask()
        datas.append(cand.value)
        opt.tell(cand, sphere(cand.value))
    native = minimize(lambda u: sphere(norm.ppf(np.clip(u, 1e-9, 1 - 1e-9))), dim, "msucb",
                      budget=budget, seed=seed, n_init=5, progress=False)
    expected = norm.ppf(np.clip(native.X_unit, 1e-9, 1 - 1e-9))
    np.testing.assert_allclose(np.array(datas), expected, atol=1e-9)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_parallel_workers_get_distinct_pending_points(algorithm: str) -> None:
    opt = H.ParametrizedHDBO(algorithm, seed=0, n_init=3)(5, budget=20, num_workers=4)
    for _ in range(4):
        opt.tell(c := opt.ask(), sphere(c.value))
    batch = [opt.ask() for _ in range(4)]  # model-based asks with pending points
    assert len(opt.engine.pending) == 4
    data = np.array([c.get_standardized_data(reference=opt.parametrization) for c in batch])
    assert len({tuple(np.round(r, 12)) for r in data}) == 4
    metas = {tuple(p.x): p.meta for p in opt.engine._pending}
    for cand in reversed(batch):
        opt.tell(cand, sphere(cand.value))
    assert len(opt.engine.pending) == 0 and opt.engine.n_told == 8
    # told in reverse order: each point kept the meta of its own ask
    for x, meta in zip(opt.engine.X[4:], opt.engine.metas[4:], strict=True):
        assert meta == metas[tuple(x)]


def test_minimize_with_workers_and_executor() -> None:
    from concurrent.futures import ThreadPoolExecutor

    opt = H.ParametrizedMSUCB(seed=3, n_init=6)(3, budget=24, num_workers=3)
    with ThreadPoolExecutor(max_workers=3) as pool:
        rec = opt.minimize(sphere, executor=pool, batch_mode=False)
    assert opt.num_ask == opt.num_tell == 24 and opt.engine.n_told == 24
    assert not len(opt.engine.pending)
    assert sphere(rec.value) == pytest.approx(min(opt.engine.y))


@pytest.mark.parametrize("budget", [None, 37])
def test_budget_is_passed_to_the_algorithm(budget: int | None) -> None:
    opt = H.ParametrizedMSUCB()(4, budget=budget)
    opt.ask()
    assert opt.engine.budget == budget
    assert opt.engine.n_init == 20  # D = 4: the axis pass (9 points) is shorter than 20


def test_tell_not_asked_is_added_and_counted() -> None:
    opt = H.ParametrizedMSUCB(seed=0)(ng.p.Array(shape=(2,), lower=-1, upper=3), budget=10)
    cand = opt.parametrization.spawn_child(new_value=np.array([1.0, 2.0]))
    opt.tell(cand, 0.5)
    assert opt.num_tell_not_asked == 1 and opt.num_tell == 1
    np.testing.assert_allclose(opt.engine.X[0], [0.5, 0.75])
    opt.suggest(np.array([-1.0, 3.0]))
    sug = opt.ask()
    np.testing.assert_allclose(sug.value, [-1.0, 3.0])
    opt.tell(sug, 0.25)
    assert opt.num_tell_not_asked == 2 and opt.engine.n_told == 2
    np.testing.assert_allclose(opt.engine.X[1], [0.0, 1.0])
    asked = opt.ask()
    opt.tell(asked, 1.0)
    assert opt.num_tell_not_asked == 2 and opt.engine.n_told == 3
    np.testing.assert_allclose(opt.provide_recommendation().value, [-1.0, 3.0])


def test_nan_and_inf_losses_are_failures() -> None:
    opt = H.ParametrizedMSUCB(seed=0, n_init=3)(2, budget=20)
    losses = [float("nan"), 3.0, float("inf"), 1e30, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ng_errors.NevergradRuntimeWarning)
        for loss in losses:
            opt.tell(opt.ask(), loss)
        cand = opt.ask()  # the model is fitted on imputed values
    y = opt.engine.y
    assert np.isinf(y[[0, 2, 3]]).all() and y[1] == 3.0 and y[4] == 2.0
    assert opt.engine.best[1] == 2.0
    assert opt.provide_recommendation().loss == 2.0
    assert np.all(np.isfinite(cand.value))
    assert H.HDBOOptimizer.engine_loss(5e20) == float("inf")
    assert H.HDBOOptimizer.engine_loss(-1.0) == -1.0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_pickle_and_dump_load_resume_identically(algorithm: str, tmp_path) -> None:
    opt = H.ParametrizedHDBO(algorithm, n_init=4)(3, budget=20, num_workers=2)
    opt.parametrization.random_state.seed(5)
    for _ in range(6):
        opt.tell(c := opt.ask(), sphere(c.value))
    pending = opt.ask()
    path = tmp_path / "opt.pkl"
    opt.dump(path)
    loaded = H.HDBOOptimizer.load(path)
    clone = pickle.loads(pickle.dumps(opt))
    nxt = [o.ask().value for o in (opt, loaded, clone)]
    np.testing.assert_array_equal(nxt[0], nxt[1])
    np.testing.assert_array_equal(nxt[0], nxt[2])
    loaded.tell(pending, 1.0)  # a candidate asked before the dump is still "asked"
    assert loaded.num_tell_not_asked == 0


def test_seeding_through_the_parametrization_random_state() -> None:
    def run(seed: int) -> np.ndarray:
        opt = ng.optimizers.registry["MSUCB"](3, budget=12)
        opt.parametrization.random_state.seed(seed)
        asked = []
        for _ in range(12):  # the design's axis probes are deterministic: compare every point
            cand = opt.ask()
            asked.append(cand.value)
            opt.tell(cand, sphere(cand.value))
        return np.array(asked)

    np.testing.assert_array_equal(run(12), run(12))
    assert not np.array_equal(run(12), run(13))


def test_constraint_violation_reaches_the_engine_unpenalised() -> None:
    opt = H.ParametrizedMSUCB(seed=0, n_init=3)(2, budget=20)
    told = [(2.0, [0.5, -1.0]), (1.0, [0.0, -2.0]), (3.0, [-1.0, -1.0])]
    for loss, cv in told:
        opt.tell(opt.ask(), loss, constraint_violation=cv)
    np.testing.assert_array_equal(opt.engine.y, [2.0, 1.0, 3.0])  # Nevergrad penalises only
    np.testing.assert_array_equal(opt.engine.constraints, [cv for _, cv in told])
    np.testing.assert_array_equal(opt.engine.feasible, [False, True, True])
    assert opt.engine.best[1] == 1.0
    assert opt.provide_recommendation().loss == 1.0  # Nevergrad's archive: feasible only


def test_constraint_violation_is_checked_before_nevergrad_records_the_tell() -> None:
    opt = H.ParametrizedMSUCB(seed=0, n_init=3)(2, budget=20)
    opt.tell(opt.ask(), 1.0, constraint_violation=[0.5])
    candidate = opt.ask()
    with pytest.raises(ValueError, match="constraint_violation"):
        opt.tell(candidate, 1.0, constraint_violation=[0.5, 1.0])
    with pytest.raises(ValueError, match="constraint_violation"):
        opt.tell(candidate, 1.0)
    assert opt.num_tell == 1 and opt.engine.n_told == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ng_errors.NevergradRuntimeWarning)
        opt.tell(candidate, float("nan"))  # a failed evaluation needs no constraint values
    assert opt.num_tell == 2 and np.isnan(opt.engine.constraints[1, 0])


def test_pickle_keeps_the_constraints_and_resumes_identically() -> None:
    opt = H.ParametrizedHDBO("msucb", n_init=3)(2, budget=20)
    opt.parametrization.random_state.seed(1)
    for _ in range(6):
        c = opt.ask()
        opt.tell(c, sphere(c.value), constraint_violation=[0.2 - float(np.sum(c.value))])
    clone = pickle.loads(pickle.dumps(opt))
    np.testing.assert_array_equal(clone.engine.constraints, opt.engine.constraints)
    np.testing.assert_array_equal(clone.ask().value, opt.ask().value)


def test_recommend_under_noise_is_the_engines_pick_not_the_luckiest_draw() -> None:
    """Auto declared noisy recommends the told point of lowest posterior quantile; through
    Nevergrad ``recommend()`` returns that point, where the archive would give the lowest
    noisy loss (a different told point here)."""
    dim, budget, seed = 3, 30, 8
    noise = np.random.default_rng(1).normal(0.0, 0.3, budget)
    param = ng.p.Array(shape=(dim,), lower=0.0, upper=1.0)
    opt = H.ParametrizedHDBO("auto", seed=seed, noisy=True)(param, budget=budget)
    native = get_algorithm("auto")(dim, seed=seed, budget=budget, noisy=True)
    for i in range(budget):
        cand = opt.ask()
        (proposal,) = native.ask(1)
        # Nevergrad's map reproduces the cube point up to one ulp: round it away
        opt.tell(cand, sphere(np.round(cand.value, 12)) + noise[i])
        native.tell(proposal.x, sphere(np.round(proposal.x, 12)) + noise[i])
    expected = native.recommend()
    luckiest = native.X[int(np.argmin(native.y))]
    assert not np.allclose(expected, luckiest)  # the case this test is about
    np.testing.assert_allclose(opt.recommend().value, expected, rtol=0, atol=1e-12)
    assert opt.provide_recommendation().value == pytest.approx(expected, abs=1e-12)


def test_recommend_without_noise_is_the_archives_best() -> None:
    opt = H.ParametrizedHDBO("auto", seed=2)(ng.p.Array(shape=(3,), lower=0.0, upper=1.0),
                                             budget=15)
    for _ in range(15):
        opt.tell(c := opt.ask(), sphere(c.value))
    best = min(opt.archive.values(), key=lambda v: v.mean)
    assert opt.recommend().value == pytest.approx(best.parameter.value, abs=0)

import numpy as np
import pytest

from hdbo_cli.problems import make_problem, problem_names
from hdbo_cli.tasks import TASKS

SYNTHETIC = [n for n in problem_names() if n not in TASKS]


@pytest.mark.parametrize("name", SYNTHETIC)
@pytest.mark.parametrize("dim", [6, 50])
def test_known_minimum_is_attained_and_is_a_lower_bound(name, dim):
    p = make_problem(name, dim, seed=3)
    assert p.noise_free(p.x_min)[0] == pytest.approx(p.f_min, abs=1e-6)
    assert np.all((p.x_min >= p.lower) & (p.x_min <= p.upper))
    U = np.random.default_rng(0).random((500, dim))
    values = p.noise_free_unit(U)
    assert values.shape == (500,) and np.all(values >= p.f_min - 1e-9)


def test_embedded_problems_ignore_extra_dimensions():
    p = make_problem("hartmann6", 100)
    X = np.tile(p.x_min, (2, 1))
    X[1, 6:] = 0.9
    assert p(X)[0] == p(X)[1]


def test_bad_problem_arguments():
    with pytest.raises(ValueError, match="unknown name"):
        make_problem("nope", 10)
    with pytest.raises(ValueError, match="dim >= 6"):
        make_problem("hartmann6", 3)
    with pytest.raises(ValueError, match="columns"):
        make_problem("ackley", 4)(np.zeros((1, 3)))


@pytest.mark.parametrize("name", ["shifted_ackley", "rotated_rastrigin", "scattered_hartmann6"])
def test_instances_are_fixed_by_the_seed_and_differ_between_seeds(name):
    a, b, c = (make_problem(name, 40, seed=s) for s in (1, 1, 2))
    U = np.random.default_rng(0).random((20, 40))
    assert np.array_equal(a.evaluate_unit(U), b.evaluate_unit(U)) and a.info == b.info
    assert not np.allclose(a.evaluate_unit(U), c.evaluate_unit(U))
    assert a.info["instance_seed"] == 1


def test_shifted_optimum_is_off_centre_and_off_the_diagonal():
    p = make_problem("shifted_levy", 100, seed=0)
    u = (p.x_min - p.lower) / (p.upper - p.lower)
    assert np.all((u >= 0.1) & (u <= 0.9)) and np.ptp(u) > 0.5
    assert p.info["optimum"] == p.x_min.tolist()


def test_scattered_embedding_uses_only_the_recorded_coordinates():
    p = make_problem("scattered_hartmann6", 300, seed=4)
    coords = p.info["coordinates"]
    assert len(coords) == 6 and coords != list(range(6))
    X = np.tile(p.x_min, (2, 1))
    X[1, np.setdiff1d(np.arange(300), coords)] = 0.9
    assert p(X)[0] == p(X)[1] == pytest.approx(p.f_min)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_task_evaluation_is_deterministic_for_a_seed(name):
    dim = TASKS[name]
    p = make_problem(name, dim, seed=0)
    assert p.f_min is None and p.x_min is None and p.info["instance_seed"] == 0
    U = np.random.default_rng(1).random((2, dim))
    first = p.evaluate_unit(U)
    assert first.shape == (2,) and np.all(np.isfinite(first)) and first[0] != first[1]
    assert np.array_equal(make_problem(name, dim, seed=0).evaluate_unit(U), first)
    with pytest.raises(ValueError, match=f"dim: {name} has {dim} parameters"):
        make_problem(name, dim + 1)


def test_lunar_lander_default_heuristic_lands():
    p = make_problem("lunar_lander", 12, seed=0)
    gymnasium_constants = [0.5, 1.0, 0.4, 0.55, 0.5, 1.0, 0.5, 0.5, 0.0, 0.5, 0.05, 0.05]
    assert p(np.array(gymnasium_constants))[0] < -150  # mean return above 150: it lands


def test_rover_cost_of_a_straight_path_through_obstacles():
    p = make_problem("rover", 60)
    straight = np.linspace([0.05, 0.05], [0.95, 0.95], 30).ravel()
    detour = np.concatenate([np.linspace([0.05, 0.05], [0.05, 0.95], 15),
                             np.linspace([0.1, 0.95], [0.95, 0.95], 15)]).ravel()
    # reward 5 minus 0.05 per unit length minus 20 per unit inside an obstacle
    assert p(detour)[0] == pytest.approx(-5 + 0.05 * 1.8, abs=0.01)
    assert p(straight)[0] > p(detour)[0] + 5


def test_noisy_ackley_is_shifted_ackley_plus_unit_gaussian_noise():
    noisy, clean = make_problem("noisy_shifted_ackley", 20, seed=2), make_problem(
        "shifted_ackley", 20, seed=2)
    U = np.random.default_rng(0).random((400, 20))
    np.testing.assert_array_equal(noisy.noise_free_unit(U), clean.evaluate_unit(U))
    noise = noisy.evaluate_unit(U) - clean.evaluate_unit(U)
    # sigma = 1: 400 draws have mean within 4 standard errors of 0, sd within 10% of 1
    assert abs(noise.mean()) < 4 / np.sqrt(400) and 0.9 < noise.std() < 1.1
    point = np.tile(U[:1], (2, 1))
    first, second = noisy.evaluate_unit(point)
    assert first != second  # each evaluation is a new draw, at the same point too
    assert noisy.noisy and not clean.noisy and noisy.f_min == clean.f_min == 0.0


@pytest.mark.parametrize("name", ["noisy_shifted_ackley", "noisy_lunar_lander",
                                  "noisy_swimmer", "noisy_hopper"])
def test_noisy_draws_are_reproducible_per_seed(name):
    dim = TASKS.get(name, 10)
    U = np.random.default_rng(1).random((3, dim))
    a, b, c = (make_problem(name, dim, seed=s) for s in (5, 5, 6))
    draws = [np.concatenate([p.evaluate_unit(U[:1]), p.evaluate_unit(U)]) for p in (a, b, c)]
    np.testing.assert_array_equal(draws[0], draws[1])
    assert not np.allclose(draws[0], draws[2])
    assert draws[0][0] != draws[0][1]  # the same point, evaluated again: a new draw


class _SeedRecorder:
    """Wraps a gymnasium environment and records the seed of every reset."""

    def __init__(self, env, seeds):
        self.env, self.seeds = env, seeds

    def reset(self, seed=None):
        self.seeds.append(seed)
        return self.env.reset(seed=seed)

    def __getattr__(self, name):
        return getattr(self.env, name)


def test_noisy_lunar_lander_trains_and_scores_on_disjoint_episodes(monkeypatch):
    gymnasium = pytest.importorskip("gymnasium")
    seeds: list[int] = []
    make = gymnasium.make
    monkeypatch.setattr(gymnasium, "make", lambda env_id: _SeedRecorder(make(env_id), seeds))
    p = make_problem("noisy_lunar_lander", 12, seed=0)
    gymnasium_constants = np.array([0.5, 1.0, 0.4, 0.55, 0.5, 1.0, 0.5, 0.5, 0.0, 0.5, 0.05,
                                    0.05])
    draws = p(np.tile(gymnasium_constants, (8, 1)))
    training = list(seeds)
    true_value = p.noise_free(gymnasium_constants)[0]
    held_out = seeds[len(training):]
    assert len(training) == 8 and len(set(training)) == 8  # one fresh episode per evaluation
    assert held_out == p.info["held_out_episode_seeds"] and len(set(held_out)) == 50
    assert not set(training) & set(held_out)
    assert p.noise_free(gymnasium_constants)[0] == true_value  # the same episodes each time
    assert len(set(draws)) == 8 and true_value not in draws
    assert true_value < -100  # the heuristic lands on average over the held-out terrains


@pytest.mark.parametrize(("name", "env_id", "dim"), [("noisy_swimmer", "Swimmer-v5", 16),
                                                     ("noisy_hopper", "Hopper-v5", 33)])
def test_noisy_policies_train_and_score_on_disjoint_start_states(monkeypatch, name, env_id,
                                                                 dim):
    """A policy's noise-free value is minus its mean return over the 50 held-out episodes,
    computed here with gymnasium directly; its draws are single episodes on other resets."""
    gymnasium = pytest.importorskip("gymnasium")
    seeds: list[int] = []
    make = gymnasium.make
    monkeypatch.setattr(gymnasium, "make", lambda env_id: _SeedRecorder(make(env_id), seeds))
    p = make_problem(name, dim, seed=0)
    W = np.random.default_rng(0).uniform(-0.3, 0.3, dim)
    p(np.tile(W, (4, 1)))
    training = list(seeds)
    held_out = p.info["held_out_episode_seeds"]
    assert len(set(training)) == 4 and not set(training) & set(held_out)
    env, returns = make(env_id), []
    for seed in held_out:
        obs, _ = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            action = np.clip(W.reshape(env.action_space.shape[0], -1) @ obs, -1.0, 1.0)
            obs, reward, terminated, truncated, _ = env.step(action)
            total, done = total + float(reward), terminated or truncated
        returns.append(total)
    assert p.noise_free(W)[0] == pytest.approx(-np.mean(returns), rel=1e-12)

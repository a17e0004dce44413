"""Real tasks for the ``hd`` suite: MuJoCo linear policies, LunarLander and rover planning.

Each task is a :class:`~hdbo_cli.functions.Problem` (minimisation, ``f_min``
unknown) built by :func:`hdbo_cli.problems.make_problem` under its name,
and is deterministic for a given ``(seed, point)``: the episode start states
and the rover map depend only on ``seed``. The gymnasium tasks need the
``tasks`` extra (``pip install "hdbo[tasks]"``: ``gymnasium[mujoco,box2d]``);
gymnasium is imported when such a problem is built, not before.

* ``swimmer`` (16 parameters), ``hopper`` (33), ``half_cheetah`` (102): a
  linear policy ``a = clip(W s, -1, 1)`` on the raw observation ``s`` of
  gymnasium's ``Swimmer-v5``, ``Hopper-v5`` and ``HalfCheetah-v5``, the
  setting of Mania et al. 2018 (ARS) without their observation whitening.
  ``W`` (actions x observations, row-major) lies in ``[-1, 1]``. The value is
  minus the return of one episode of at most 1000 steps started by
  ``reset(seed=seed)``. Measured CPU per evaluation here: Swimmer 0.2 s,
  HalfCheetah 0.1 s, Hopper under 0.01 s (a poor policy falls within tens of
  steps, which ends the episode).
* ``lunar_lander`` (12): the parametrised version of gymnasium's heuristic
  ``LunarLander-v3`` controller used in the TuRBO paper (Eriksson et al. 2019,
  Sec. 4): the heuristic's twelve constants (target-angle gains and clip,
  hover gain, the PD gains of the angle and hover errors, the leg-contact
  overrides and the two firing thresholds) are the parameters, in ``[0, 2]``.
  The value is minus the mean return over 10 episodes with fixed terrain
  seeds drawn from ``seed`` (TuRBO averages 50; 10 keeps an evaluation near
  0.2 s). Gymnasium's own constants score 192 on seed 0's ten episodes.
* ``noisy_lunar_lander`` (12): the same controller, one episode per
  evaluation with a fresh terrain: the k-th evaluation (counted from 0) resets
  with a seed in ``[0, 2^31)`` drawn from ``(seed, k)``, so a run is
  reproducible. Its noise-free value (``Problem.f_true``, for scoring only) is
  minus the mean return over 50 held-out episodes whose seeds, drawn from
  ``seed`` in ``[2^31, 2^32)``, no evaluation ever uses (``info``
  records them).
* ``noisy_swimmer`` (16), ``noisy_hopper`` (33): the linear policies above, one episode
  per evaluation from a fresh start state (the k-th reset seed drawn as for
  ``noisy_lunar_lander``; gymnasium perturbs the start state by the reset seed), scored by
  minus the mean return over 50 held-out episodes. Swimmer's return varies by a standard
  deviation of 4-12 over reset seeds at returns of -30 to 18 (three random policies, ten
  seeds each).
* ``rover`` (60): rover trajectory planning of Wang et al. 2018 (EBO, Sec.
  5.2), reimplemented from the paper's description: the 60 numbers are 30
  control points in ``[0, 1]^2`` of a clamped cubic B-spline from near the
  start ``s = (0.05, 0.05)`` to near the goal ``g = (0.95, 0.95)``. Reward
  ``r(x) = -c(x) - 10 (|x_1 - s|_1 + |x_30 - g|_1) + 5`` (the paper's lambda =
  -10, b = 5), with ``c`` the trajectory's cost: its length times 0.05, plus
  20 per unit of length inside an obstacle. The map (ours: the paper's is
  not given in full) has 16 square obstacles of side 0.1 on a jittered 4 x 4
  grid, four of them across the straight line from start to goal, fixed for
  every seed. The value is ``-r(x)``; the best possible is just above -5.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from .functions import Array, Problem, instance_key, instance_rng

# name: (gymnasium id, number of parameters)
_MUJOCO = {"swimmer": ("Swimmer-v5", 16), "hopper": ("Hopper-v5", 33),
           "half_cheetah": ("HalfCheetah-v5", 102)}
# the noisy tasks: one episode per evaluation on a fresh reset seed (module docstring)
_NOISY = {"noisy_lunar_lander": "lunar_lander", "noisy_swimmer": "swimmer",
          "noisy_hopper": "hopper"}
TASKS: dict[str, int] = {**{k: v[1] for k, v in _MUJOCO.items()},
                         "lunar_lander": 12, "rover": 60}
TASKS.update({noisy: TASKS[task] for noisy, task in _NOISY.items()})
LUNAR_EPISODES = 10
HELD_OUT_EPISODES = 50  # a noisy task's scoring episodes
_TRAINING_SEEDS, _HELD_OUT_SEEDS = (0, 2**31), (2**31, 2**32)  # disjoint reset-seed ranges


def make_task(name: str, dim: int, seed: int) -> Problem:
    """The task ``name`` (a key of :data:`TASKS`), whose dimension is fixed, for ``seed``."""
    if dim != TASKS[name]:
        raise ValueError(f"dim: {name} has {TASKS[name]} parameters, got dim={dim}")
    if name == "rover":
        return Problem(name, dim, np.zeros(dim), np.ones(dim), _rover_value, None, None,
                       {"instance_seed": seed})
    if name == "lunar_lander":
        episode_seeds = instance_rng(name, seed).integers(2**31, size=LUNAR_EPISODES)
        f = _per_row(_EpisodeReturn("LunarLander-v3", _lunar_action, episode_seeds))
        return Problem(name, dim, np.zeros(dim), np.full(dim, 2.0), f, None, None,
                       {"instance_seed": seed, "episode_seeds": episode_seeds.tolist()})
    if name in _NOISY:
        task = _NOISY[name]
        env_id, policy, lower, upper = (
            ("LunarLander-v3", _lunar_action, 0.0, 2.0) if task == "lunar_lander"
            else (_MUJOCO[task][0], _linear_action, -1.0, 1.0))
        held_out = instance_rng(name, seed).integers(*_HELD_OUT_SEEDS, size=HELD_OUT_EPISODES)
        noisy = _FreshEpisode(env_id, policy, instance_key(name, seed))
        f_true = _EpisodeReturn(env_id, policy, held_out)
        start = "terrain" if task == "lunar_lander" else "start state"
        info = {"instance_seed": seed, "env": env_id,
                "noise": f"one episode per evaluation, each on a fresh {start} (reset seed)",
                "held_out_episode_seeds": held_out.tolist()}
        return Problem(name, dim, np.full(dim, lower), np.full(dim, upper), _per_row(noisy),
                       None, None, info, f_true=_per_row(f_true))
    env_id, _ = _MUJOCO[name]
    f = _per_row(_EpisodeReturn(env_id, _linear_action, np.array([seed])))
    return Problem(name, dim, -np.ones(dim), np.ones(dim), f, None, None,
                   {"instance_seed": seed, "env": env_id, "reset_seed": seed})


def _per_row(value: Callable[[Array], float]) -> Callable[[Array], Array]:
    return lambda X: np.array([value(x) for x in X])


class _EpisodeReturn:
    """Minus the mean return of ``policy(params, obs)`` over episodes reset with ``seeds``.

    The environment is made at the first call and kept: building the problem
    (and pickling it to a worker) stays cheap.
    """

    def __init__(self, env_id: str, policy: Callable[[Array, Array, Any], Any],
                 seeds: Array) -> None:
        self.env_id, self.policy, self.seeds = env_id, policy, [int(s) for s in seeds]
        self.env: Any = None

    def __call__(self, params: Array) -> float:
        return self.mean_loss(params, self.seeds)

    def mean_loss(self, params: Array, seeds: list[int]) -> float:
        """Minus the mean return of the episodes reset with ``seeds``."""
        if self.env is None:
            try:
                import gymnasium
            except ImportError as err:
                raise ImportError("the gymnasium tasks need the tasks extra: "
                                  'pip install "hdbo[tasks]"') from err
            self.env = gymnasium.make(self.env_id)
        total = 0.0
        for seed in seeds:
            obs, _ = self.env.reset(seed=seed)
            done = False
            while not done:
                obs, reward, terminated, truncated, _ = self.env.step(
                    self.policy(params, obs, self.env))
                total += float(reward)
                done = terminated or truncated
        return -total / len(seeds)


class _FreshEpisode(_EpisodeReturn):
    """Minus the return of one episode per call, the k-th call's reset seed drawn from the
    generator seeded by ``(*key, k)`` in the training range (module docstring)."""

    def __init__(self, env_id: str, policy: Callable[[Array, Array, Any], Any],
                 key: list[int]) -> None:
        super().__init__(env_id, policy, np.empty(0))
        self.key, self.count = key, 0

    def __call__(self, params: Array) -> float:
        rng = np.random.default_rng([*self.key, self.count])
        self.count += 1
        return self.mean_loss(params, [int(rng.integers(*_TRAINING_SEEDS))])


def _linear_action(params: Array, obs: Array, env: Any) -> Array:
    """``clip(W s, -1, 1)`` with ``W`` the parameters as an (actions, observations) matrix."""
    W = params.reshape(env.action_space.shape[0], obs.shape[0])
    return np.clip(W @ obs, -1.0, 1.0)


def _lunar_action(w: Array, s: Array, env: Any) -> int:
    """Gymnasium's heuristic lander with its twelve constants replaced by ``w``.

    ``s``: x, y, vx, vy, angle, angular velocity, left and right leg contact.
    Actions: 0 nothing, 1 left engine, 2 main engine, 3 right engine.
    """
    angle_target = np.clip(s[0] * w[0] + s[2] * w[1], -w[2], w[2])
    hover_target = w[3] * abs(s[0])
    angle_todo = (angle_target - s[4]) * w[4] - s[5] * w[5]
    hover_todo = (hover_target - s[1]) * w[6] - s[3] * w[7]
    if s[6] or s[7]:  # a leg touches the ground
        angle_todo = w[8]
        hover_todo = -s[3] * w[9]
    if hover_todo > abs(angle_todo) and hover_todo > w[10]:
        return 2
    if angle_todo < -w[11]:
        return 3
    if angle_todo > w[11]:
        return 1
    return 0


# ---------------------------------------------------------------- rover

_ROVER_START, _ROVER_GOAL = np.array([0.05, 0.05]), np.array([0.95, 0.95])
_GRID = np.array([(0.2 + 0.2 * i, 0.2 + 0.2 * j) for i in range(4) for j in range(4)])
_OBSTACLES = _GRID + np.random.default_rng(2018).uniform(-0.04, 0.04, _GRID.shape)
_HALF_SIDE, _OBSTACLE_COST, _FREE_COST = 0.05, 20.0, 0.05
_SPLINE_POINTS = 1000


@cache
def _spline_basis(n_control: int = 30, degree: int = 3) -> Array:
    """(_SPLINE_POINTS, n_control) clamped B-spline basis on ``[0, 1]``."""
    from scipy.interpolate import BSpline

    interior = np.linspace(0.0, 1.0, n_control - degree + 1)[1:-1]
    knots = np.concatenate([np.zeros(degree + 1), interior, np.ones(degree + 1)])
    t = np.linspace(0.0, 1.0, _SPLINE_POINTS)
    return BSpline.design_matrix(t, knots, degree).toarray()



def _rover_value(X: Array) -> Array:
    """Minus the rover reward (module docstring) of each row of ``X`` (n, 60)."""
    control = X.reshape(len(X), 30, 2)
    path = np.einsum("tk,nkd->ntd", _spline_basis(), control)  # (n, 1000, 2)
    steps = np.diff(path, axis=1)
    lengths = np.linalg.norm(steps, axis=2)
    mid = path[:, :-1] + steps / 2
    inside = (np.abs(mid[:, :, None, :] - _OBSTACLES[None, None]) <= _HALF_SIDE).all(3).any(2)
    cost = (lengths * (_FREE_COST + _OBSTACLE_COST * inside)).sum(1)
    ends = (np.abs(control[:, 0] - _ROVER_START).sum(1)
            + np.abs(control[:, -1] - _ROVER_GOAL).sum(1))
    return cost + 10.0 * ends - 5.0

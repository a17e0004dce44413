import numpy as np
import pytest

from hdbo_engine.problems import make_problem, problem_names


@pytest.mark.parametrize("name", problem_names())
@pytest.mark.parametrize("dim", [6, 50])
def test_known_minimum_is_attained_and_is_a_lower_bound(name, dim):
    p = make_problem(name, dim)
    assert p(p.x_min)[0] == pytest.approx(p.f_min, abs=1e-6)
    assert np.all((p.x_min >= p.lower) & (p.x_min <= p.upper))
    U = np.random.default_rng(0).random((500, dim))
    values = p.evaluate_unit(U)
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

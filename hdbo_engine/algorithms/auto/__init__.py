"""Auto: the recommended optimizer. It runs the shared initial design once, then lets arms
take turns on one history: MS-UCB, CobBO, GO-UCB and BKB, chosen each turn by Thompson
sampling on how often each one's proposals improved the best value; constrained EI once a
feasible point is known; an evolution strategy where the design found no effect; and, with
fewer than ten evaluations per dimension, COBYLA first.

One module per part, each with its rules and defaults in its docstring:

* :mod:`.portfolio`: :class:`Auto` itself, the arms' order, the choice and the records.
* :mod:`.arm`: what an arm is, and how its told proposals are credited.
* :mod:`.members`: the engine's algorithms as arms.
* :mod:`.constrained_ei`, :mod:`.evolution`, :mod:`.cobyla`: Auto's own arms.
* :mod:`.noise`: the replicate, the noise judgement and the recommendation.

The evidence behind each rule: ``docs/algorithms/auto.md``.
"""

from .cobyla import COBYLA, COBYLA_PER_DIM, COBYLA_RHOBEG, COBYLA_X0, effective_dim
from .constrained_ei import CEI, CEI_FAILURES, CEI_MAX_RADIUS, CEI_MIN_RADIUS, CEI_RADIUS
from .evolution import ES, ES_MAX_SIGMA, ES_MIN_SIGMA, ES_SIGMA, ES_START, EsState
from .members import LARGE_D, LARGE_D_MEMBERS, MEMBERS, default_members
from .noise import NOISY_VAR, RECOMMEND_MAX, RECOMMEND_MIN, RECOMMEND_QUANTILE, REPLICATE
from .portfolio import WINDOW, Auto, AutoOptions

__all__ = [
    "Auto", "AutoOptions", "default_members", "effective_dim", "EsState", "MEMBERS",
    "LARGE_D", "LARGE_D_MEMBERS", "WINDOW", "NOISY_VAR", "RECOMMEND_MIN", "RECOMMEND_MAX",
    "RECOMMEND_QUANTILE", "REPLICATE", "CEI", "CEI_RADIUS", "CEI_MAX_RADIUS",
    "CEI_MIN_RADIUS", "CEI_FAILURES", "ES", "ES_SIGMA", "ES_MAX_SIGMA", "ES_MIN_SIGMA",
    "ES_START", "COBYLA", "COBYLA_X0", "COBYLA_PER_DIM", "COBYLA_RHOBEG",
]

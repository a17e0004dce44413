"""The constants that name the engine's random streams.

Each ask draws from a generator keyed by ``(seed, n_told, n_pending)``
(:mod:`hdbo_engine.base`). A draw that must be the same whenever it is made (the axis
design's order, CobBO's blocks, MS-UCB's ``Z_t``, BKB's dictionary) comes from a stream of
its own instead, ``np.random.SeedSequence(seed, spawn_key=(STREAM, ...))``, whose first key
is one of these constants: it keeps the stream apart from the optimizer's other streams,
and from the ask streams until ``n_told`` reaches it. The values are part of the recorded
behaviour (``tests/test_behaviour_lock.py``): changing one changes every proposal that
depends on a draw from its stream.
"""

from __future__ import annotations

DESIGN_AXIS = 52_711  # the axis design's coordinate order and step factors (design.py)
MSUCB_Z = 7_919  # MS-UCB's subspaces Z_t, one key (MSUCB_Z, t) per iteration
MSUCB_MASKS = 7_927  # the perturbation masks of Z_t, one key (MSUCB_MASKS, t) per iteration
COBBO_BLOCKS = 104_729  # CobBO's block of round r, key (COBBO_BLOCKS, r)
COBBO_ESCAPES = 130_363  # CobBO's escape sampling after n told points, key (COBBO_ESCAPES, n)
# GO-UCB's network initialisation r, key (GOUCB_INIT, r). It shares its value with
# COBBO_BLOCKS: no algorithm draws from both. In Auto, whose members CobBO and GO-UCB are
# built with one seed, CobBO's block of round r and GO-UCB's initialisation r come from
# one SeedSequence, but feed unrelated draws of different generators (NumPy's choice of a
# block, the seed of torch's generator for the network's weights).
GOUCB_INIT = 104_729
BKB_DICTIONARY = 4_241  # BKB's dictionary after n evaluations, key (BKB_DICTIONARY, n)
BKB_FIT = 4_243  # the evaluations of BKB's hyperparameter fit at n, key (BKB_FIT, n)

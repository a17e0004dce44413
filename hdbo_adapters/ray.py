"""Ray Tune's ``OptunaSearch`` for hdbo's samplers: early-stopped trials told as pruned, and a
restore that agrees with the study's storage.

Ray Tune drives Optuna samplers through ``ray.tune.search.optuna.OptunaSearch`` and
Nevergrad optimizers through ``ray.tune.search.nevergrad.NevergradSearch``; both work with
hdbo as they are (README, "Ray Tune")::

    from ray.tune.search.optuna import OptunaSearch
    from hdbo_adapters.optuna import AutoSampler
    search = OptunaSearch(sampler=AutoSampler(seed=0, budget=200))

:class:`OptunaSearch` here is Ray's, with the same arguments and two translations added;
use it with a trial scheduler (ASHA) or with an RDB ``storage`` and ``Tuner.restore``.
It holds no algorithm logic (``docs/ARCHITECTURE.md``).

* **Early stopping** (``max_t``). Ray calls ``on_trial_complete`` with a stopped trial's
  last result, and Ray's ``OptunaSearch`` tells it as COMPLETE with that intermediate value
  (only a trial that reported nothing becomes PRUNED, one that raised FAIL). Given the
  scheduler's ``max_t``, a trial whose last result has ``time_attr`` below ``max_t`` ran
  short of its full length and is told as Optuna tells a pruned trial: its last value is
  reported as an intermediate value at its step, and the trial is PRUNED, which hdbo's
  samplers tell the engine as a failed evaluation (``hdbo_adapters.optuna``, "History").
* **Restore** (``Tuner.restore``). Tune restores the searcher from its last experiment
  checkpoint, which an RDB storage has usually outrun when the driver died. The restored
  searcher reconciles the two: a trial it knows that the storage already finished is left
  as the storage has it (Tune runs it again, and its results are not told a second time,
  where Ray's ``OptunaSearch`` fails the whole run on the first of them), and a RUNNING
  trial of the study it does not know (asked after the checkpoint; Tune will never run it)
  is failed, as a dead worker's trial is, so that it is no longer a pending point.
"""

from __future__ import annotations

from typing import Any

from optuna.trial import TrialState
from ray.tune.result import TRAINING_ITERATION
from ray.tune.search.optuna import OptunaSearch as _RayOptunaSearch

__all__ = ["OptunaSearch"]


class OptunaSearch(_RayOptunaSearch):
    """Ray Tune's ``OptunaSearch`` with early-stopped trials told as PRUNED and a restore
    reconciled with the storage (module docstring).

    Parameters (defaults in brackets)
    ---------------------------------
    *args, **kwargs: those of ``ray.tune.search.optuna.OptunaSearch`` (``sampler``,
        ``storage``, ``study_name``, ``metric``, ``mode``, ...).
    max_t: the full length of a trial in ``time_attr`` units, the ``max_t`` of the trial
        scheduler (``ASHAScheduler(max_t=...)``); a trial that ends before it is PRUNED
        [None: every trial with a value is COMPLETE, as in Ray's ``OptunaSearch``].
    time_attr: the result key ``max_t`` counts [``"training_iteration"``, as ASHA's].
    """

    def __init__(self, *args: Any, max_t: int | None = None,
                 time_attr: str = TRAINING_ITERATION, **kwargs: Any) -> None:
        if max_t is not None and (isinstance(max_t, bool) or not isinstance(max_t, int)
                                  or max_t < 1):
            raise ValueError(f"max_t: expected an int >= 1 or None, got {max_t!r}")
        if not isinstance(time_attr, str):
            raise TypeError(f"time_attr: expected a result key (str), got {time_attr!r}")
        super().__init__(*args, **kwargs)
        self._max_t = max_t
        self._time_attr = time_attr
        self._finished_elsewhere: set[str] = set()

    def on_trial_result(self, trial_id: str, result: dict) -> None:
        if trial_id not in self._finished_elsewhere:
            super().on_trial_result(trial_id, result)

    def on_trial_complete(self, trial_id: str, result: dict | None = None,
                          error: bool = False) -> None:
        if trial_id in self._finished_elsewhere:
            self._completed_trials.add(trial_id)
            return
        if self._stopped_early(trial_id, result, error):
            ot_trial = self._ot_trials[trial_id]
            ot_trial.report(result[self.metric], result[TRAINING_ITERATION])
            self._ot_study.tell(ot_trial, state=TrialState.PRUNED)
            self._completed_trials.add(trial_id)
            return
        super().on_trial_complete(trial_id, result=result, error=error)

    def _stopped_early(self, trial_id: str, result: dict | None, error: bool) -> bool:
        return (self._max_t is not None and not error and bool(result)
                and trial_id not in self._completed_trials and isinstance(self.metric, str)
                and result.get(self.metric) is not None and self._time_attr in result
                and result[self._time_attr] < self._max_t)

    def restore(self, checkpoint_path: str) -> None:
        super().restore(checkpoint_path)
        study = self._ot_study
        known = {t.number: trial_id for trial_id, t in self._ot_trials.items()}
        for trial in study.get_trials(deepcopy=False):
            trial_id = known.get(trial.number)
            if trial_id is None:
                if trial.state == TrialState.RUNNING:
                    study.tell(trial.number, state=TrialState.FAIL)
            elif trial.state.is_finished() and trial_id not in self._completed_trials:
                self._finished_elsewhere.add(trial_id)

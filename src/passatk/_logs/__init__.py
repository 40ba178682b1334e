"""Readers of the logs that evaluation tools write, for :func:`passatk.load_results` and ``passatk evaluate``.

One module per tool, each knowing that tool's layout and nothing about
statistics or processes:

``inspect_log``
    inspect_ai logs, ``.eval`` (a zip of JSON members, zstd-compressed by
    current versions) and ``.json``: each sample's score, its epochs as
    repeated samples.
``lm_eval_log``
    lm-evaluation-harness ``--log_samples`` files (``samples_<task>_<date>.jsonl``):
    per-document verdicts for ``load_results``; the completions for
    ``passatk evaluate`` when the task logged no verdict (its HumanEval and
    MBPP tasks run with ``--predict_only``).
``multipl_e``
    MultiPL-E ``*.results.json(.gz)``, one file per problem, or a directory of them.
``bigcode``
    bigcode-evaluation-harness ``generations_<task>.json``, for ``passatk evaluate``.
``samples``
    The sample readers ``passatk evaluate`` uses for the logs above, and the rule
    that turns a whole program into the completion after a problem's prompt.

Every malformed input raises :class:`~passatk.ResultsFormatError` naming the
file, the line or zip member, and the field.
"""

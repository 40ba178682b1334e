"""veRL, the real package: the estimator through veRL's registry and its own compute_advantage on a DataProto,
the reward through veRL's reward-manager call path, and setup() reaching a Ray actor as veRL's TaskRunner is."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

verl = pytest.importorskip("verl", reason="needs veRL: pip install 'passatk[verl]'")
torch = pytest.importorskip("torch", reason="needs torch")
omegaconf = pytest.importorskip("omegaconf", reason="needs omegaconf (veRL's dependency)")

from verl import DataProto  # noqa: E402
from verl.trainer.ppo import core_algos  # noqa: E402

from passatk.integrations import verl as ours  # noqa: E402
from passatk.rl import pass_at_k_weights  # noqa: E402


def _batch(scores, uids, length=5):
    """A DataProto as veRL's trainer has it before compute_advantage: outcome reward on the last real token."""
    scores = torch.tensor(scores, dtype=torch.float32)
    lengths = torch.tensor([length - (i % 3) for i in range(len(scores))])
    mask = (torch.arange(length)[None, :] < lengths[:, None]).to(torch.int64)
    token_rewards = torch.zeros(len(scores), length)
    token_rewards[torch.arange(len(scores)), lengths - 1] = scores
    return DataProto.from_dict(
        tensors={"token_level_rewards": token_rewards, "response_mask": mask},
        non_tensors={"uid": np.array(uids, dtype=object)},
    )


@pytest.fixture(scope="module")
def registered():
    ours.setup()
    return core_algos.get_adv_estimator_fn(ours.ESTIMATOR_NAME)


class TestRegistration:
    def test_setup_registers_through_verls_registry_and_twice_is_fine(self, registered):
        """setup() puts passatk's estimator in veRL's registry; a second call (every Ray worker makes one) is a no-op."""
        ours.setup()
        ours.setup()
        assert registered is ours.pass_at_k_advantage
        assert core_algos.get_adv_estimator_fn("pass_at_k") is registered

    def test_a_name_taken_by_another_estimator_is_an_error(self):
        """setup() will not replace an estimator that is not passatk's."""
        with pytest.raises(ValueError, match="already has an advantage estimator named 'grpo_passk'"):
            ours.setup("grpo_passk")

    def test_compute_advantage_of_verl_on_a_dataproto(self, registered):
        """veRL's own compute_advantage, adv_estimator=pass_at_k, k from the algorithm config: n * w per response, masked."""
        from verl.trainer.ppo.ray_trainer import compute_advantage

        scores = [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
        uids = ["a", "a", "a", "a", "b", "b", "b", "b"]
        data = _batch(scores, uids)
        config = omegaconf.OmegaConf.create({"adv_estimator": "pass_at_k", "pass_at_k": {"k": 2}})
        out = compute_advantage(data, adv_estimator="pass_at_k", config=config)
        want = 4 * pass_at_k_weights(np.array(scores), 2, index=np.array(uids, dtype=object))
        mask = data.batch["response_mask"].numpy()
        np.testing.assert_allclose(out.batch["advantages"].numpy(), want[:, None] * mask, rtol=1e-6)
        assert out.batch["returns"] is out.batch["advantages"] or torch.equal(out.batch["returns"], out.batch["advantages"])

    def test_v1_trainer_path(self, registered):
        """The v1 trainer's compute_advantage_for_multi_trajectories hands non-GRPO estimators to the same function."""
        v1 = pytest.importorskip("verl.trainer.ppo.v1.utils", reason="veRL's v1 trainer needs TransferQueue")
        scores, uids = [1.0, 0.0, 1.0, 0.0, 0.0, 0.0], ["q1", "q1", "q1", "q2", "q2", "q2"]
        data = _batch(scores, uids)
        out = v1.compute_advantage_for_multi_trajectories(
            data, batch_keys=[], adv_estimator="pass_at_k", config=omegaconf.OmegaConf.create({"pass_at_k": 3})
        )
        want = 3 * pass_at_k_weights(np.array(scores), 3, index=np.array(uids, dtype=object))
        np.testing.assert_allclose(out.batch["advantages"][:, 0].numpy(), want, rtol=1e-6)

    def test_k_from_the_environment_with_verls_algo_config(self, registered, monkeypatch):
        """With veRL's AlgoConfig dataclass (no room for a key of ours) k comes from PASSATK_K."""
        from verl.trainer.config import AlgoConfig
        from verl.trainer.ppo.ray_trainer import compute_advantage

        monkeypatch.setenv("PASSATK_K", "2")
        scores, uids = [1.0, 0.0, 0.0, 1.0], ["a", "a", "b", "b"]
        out = compute_advantage(_batch(scores, uids), adv_estimator="pass_at_k", config=AlgoConfig(adv_estimator="pass_at_k"))
        want = 2 * pass_at_k_weights(np.array(scores), 2, index=np.array(uids, dtype=object))
        np.testing.assert_allclose(out.batch["advantages"][:, 0].numpy(), want, rtol=1e-6)
        monkeypatch.delenv("PASSATK_K")
        with pytest.raises(ValueError, match=r"\+algorithm\.pass_at_k\.k=8"):
            compute_advantage(_batch(scores, uids), adv_estimator="pass_at_k", config=AlgoConfig(adv_estimator="pass_at_k"))

    def test_groups_smaller_than_k(self, registered):
        """A group that lost rollouts: "shrink" (default) trains it on pass@n, "zero" gives it 0, "raise" stops."""
        from verl.trainer.ppo.ray_trainer import compute_advantage

        scores = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0]  # group b has 3 responses left of 4
        uids = ["a"] * 4 + ["b"] * 3
        adv = {}
        for policy in ("shrink", "zero"):
            config = omegaconf.OmegaConf.create({"pass_at_k": {"k": 4, "small_groups": policy}})
            adv[policy] = compute_advantage(_batch(scores, uids), adv_estimator="pass_at_k", config=config).batch["advantages"][
                :, 0
            ]
        a_only = 4 * pass_at_k_weights([scores[:4]], 4)[0]
        b_at_3 = 3 * pass_at_k_weights([scores[4:]], 3)[0]
        np.testing.assert_allclose(adv["shrink"].numpy(), np.r_[a_only, b_at_3], rtol=1e-6)
        np.testing.assert_allclose(adv["zero"].numpy(), np.r_[a_only, 0, 0, 0], rtol=1e-6)
        config = omegaconf.OmegaConf.create({"pass_at_k": {"k": 4, "small_groups": "raise"}})
        with pytest.raises(ValueError, match="group 'b' has n=3 < k=4"):
            compute_advantage(_batch(scores, uids), adv_estimator="pass_at_k", config=config)


@pytest.mark.ray
@pytest.mark.slow
def test_setup_as_ray_worker_process_setup_hook_reaches_an_actor(tmp_path):
    """As veRL runs it: the trainer in a Ray actor, the estimator registered there by the runtime_env's hook alone."""
    script = textwrap.dedent(
        """
        import os, sys
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray
        ray.init(address="local", num_cpus=1, include_dashboard=False, configure_logging=False, log_to_driver=False,
                 runtime_env={"worker_process_setup_hook": "passatk.integrations.verl.setup"})

        @ray.remote
        class TaskRunner:  # where veRL computes advantages
            def run(self):
                import numpy as np, torch
                from omegaconf import OmegaConf
                from verl import DataProto
                from verl.trainer.ppo.ray_trainer import compute_advantage
                data = DataProto.from_dict(
                    tensors={"token_level_rewards": torch.tensor([[0.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 0.0]]),
                             "response_mask": torch.ones(4, 2, dtype=torch.int64)},
                    non_tensors={"uid": np.array(["a", "a", "b", "b"], dtype=object)})
                out = compute_advantage(data, adv_estimator="pass_at_k", config=OmegaConf.create({"pass_at_k": 1}))
                return out.batch["advantages"][:, 1].tolist()

        from verl.trainer.ppo import core_algos
        assert "pass_at_k" not in core_algos.ADV_ESTIMATOR_REGISTRY  # the driver never registered it
        print(ray.get(TaskRunner.remote().run.remote()))
        ray.shutdown()
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[1.0, -1.0, 1.0, -1.0]"


# --------------------------------------------------------------------------- #
# the reward
# --------------------------------------------------------------------------- #
def _response(code: str) -> str:
    return f"Let me think.\n```python\n# a first try\n```\nFinal answer:\n```python\n{code}\n```\n"


GROUND_TRUTH = json.dumps({"fn_name": "add", "inputs": ["1\n2", "5\n-5", "0\n0"], "outputs": ["3", "0", "0"]})
STDIO_TRUTH = {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]}


@pytest.mark.sandbox
class TestComputeScore:
    def test_scores_and_keys(self):
        """1.0 / 0.0 (the share of cases with continuous=True), the status and the pass fraction."""
        good = ours.compute_score("apps", _response("def add(a, b):\n    return a + b"), GROUND_TRUTH, workers=2)
        half = ours.compute_score("apps", _response("def add(a, b):\n    return a + b if a else 1"), GROUND_TRUTH, workers=2)
        cont = ours.compute_score("apps", _response("def add(a, b):\n    return a * b"), GROUND_TRUTH, continuous=True, workers=2)
        assert good == {"score": 1.0, "status": "passed", "pass_fraction": 1.0}
        assert half == {"score": 0.0, "status": "failed", "pass_fraction": pytest.approx(2 / 3)}
        assert cont == {"score": pytest.approx(1 / 3), "status": "failed", "pass_fraction": pytest.approx(1 / 3)}

    def test_ground_truth_forms(self):
        """A dict or JSON text; APPS standard input; a passatk task; numpy arrays from parquet read as lists."""
        stdin = _response("import sys\nprint(sum(map(int, sys.stdin.read().split())))")
        assert ours.compute_score("codecontests", stdin, STDIO_TRUTH, workers=2)["score"] == 1.0
        as_numpy = {
            "inputs": np.array(STDIO_TRUTH["inputs"], dtype=object),
            "outputs": np.array(STDIO_TRUTH["outputs"], dtype=object),
        }
        assert ours.compute_score("codecontests", stdin, as_numpy, workers=2)["score"] == 1.0
        tests = {"tests": "def check(candidate):\n    assert candidate(2) == 4\n", "entry_point": "sq"}
        assert (
            ours.compute_score("humaneval", _response("def sq(x):\n    return x * x"), json.dumps(tests), workers=2)["score"]
            == 1.0
        )

    def test_looping_and_crashing_programs_are_zero(self):
        """A program that loops gets timeout within its limit; one that crashes, error; both score 0."""
        loop = ours.compute_score("apps", _response("def add(a, b):\n    while True: pass"), GROUND_TRUTH, timeout=0.5, workers=2)
        crash = ours.compute_score("apps", _response("import os\nos._exit(0)"), GROUND_TRUTH, workers=2)
        assert (loop["status"], loop["score"]) == ("timeout", 0.0)
        assert (crash["status"], crash["score"]) == ("error", 0.0)

    @pytest.mark.parametrize(
        ("ground_truth", "error", "message"),
        [
            ("not json", ValueError, "not JSON"),
            ({"answer": "42"}, ValueError, "must hold code tests"),
            (42, TypeError, "dict or its JSON"),
        ],
    )
    def test_ground_truth_without_tests_is_an_error(self, ground_truth, error, message):
        """Data that holds no tests is an error (a misconfigured data source), never a silent 0."""
        with pytest.raises(error, match=message):
            ours.compute_score("apps", "x", ground_truth)

    def test_async_twin(self):
        """acompute_score gives what compute_score gives."""
        response = _response("def add(a, b):\n    return a + b")
        assert asyncio.run(ours.acompute_score("apps", response, GROUND_TRUTH, workers=2))["score"] == 1.0


def _tokenizer():
    """A byte-level tokenizer with no merges, built here: any text round-trips."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {"<pad>": 0, "<eos>": 1, **{c: i + 2 for i, c in enumerate(alphabet)}}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


def _rollouts(tokenizer, responses, ground_truths, prompt="Write add(a, b).", length=256):
    """The DataProto a reward manager receives: prompts, right-padded responses, attention mask, ground truth."""
    p = tokenizer(prompt)["input_ids"]
    rows, masks = [], []
    for text in responses:
        r = tokenizer(text)["input_ids"][:length]
        rows.append(r + [0] * (length - len(r)))
        masks.append([1] * len(p) + [1] * len(r) + [0] * (length - len(r)))
    n = len(responses)
    return DataProto.from_dict(
        tensors={
            "prompts": torch.tensor([p] * n),
            "responses": torch.tensor(rows),
            "attention_mask": torch.tensor(masks),
        },
        non_tensors={
            "data_source": np.array(["apps"] * n, dtype=object),
            "reward_model": np.array([{"ground_truth": g, "style": "rule"} for g in ground_truths], dtype=object),
        },
    )


@pytest.mark.sandbox
@pytest.mark.parametrize("name", ["compute_score", "acompute_score"])
def test_reward_through_verls_reward_manager(name):
    """veRL loads the function from custom_reward_function (pkg://), its naive reward manager decodes and scores."""
    from verl.trainer.ppo.reward import load_reward_manager

    config = omegaconf.OmegaConf.create(
        {
            "reward": {
                "custom_reward_function": {
                    "path": "pkg://passatk.integrations.verl",
                    "name": name,
                    "reward_kwargs": {"workers": 2},
                },
                "reward_manager": {"source": "register", "name": "naive"},
            }
        }
    )
    tokenizer = _tokenizer()
    manager = load_reward_manager(config, tokenizer)
    responses = [
        _response("def add(a, b):\n    return a + b"),
        _response("def add(a, b):\n    return a - b"),
        _response("def add(a, b):\n    while True:\n        pass"),
    ]
    data = _rollouts(tokenizer, responses, [GROUND_TRUTH] * 3)

    async def score_all():
        return [await manager.run_single(data[i : i + 1]) for i in range(len(data))]

    results = manager.loop.run_until_complete(score_all()) if not manager.loop.is_running() else None
    assert [r["reward_score"] for r in results] == [1.0, 0.0, 0.0]
    assert [r["reward_extra_info"]["status"] for r in results] == ["passed", "failed", "timeout"]
    assert results[1]["reward_extra_info"]["pass_fraction"] == pytest.approx(1 / 3)


def test_extract_code_is_prime_codes_rule():
    """The program is taken as veRL's prime_code takes it, on every shape of response."""
    prime_code = pytest.importorskip("verl.utils.reward_score.prime_code")
    import inspect

    assert 'completion.split("```python")[-1].split("```")[0]' in inspect.getsource(prime_code.compute_score)
    for text in ["x = 1", "```python\nx = 1\n```", "a\n```python\nx\n```\nb\n```python\ny", "```\nx\n```", ""]:
        assert ours.extract_code(text) == text.split("```python")[-1].split("```")[0]


def test_import_does_not_import_verl_or_the_executor():
    """passatk.integrations.verl loads neither veRL nor the executor until they are used."""
    code = "import passatk.integrations.verl, passatk.integrations.trl, sys; assert not {'verl', 'trl', 'passatk.execute'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})


README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "guide", "rl.md")  # the veRL command


def _readme_overrides() -> list[str]:
    """The overrides of the docs' veRL command (docs/guide/rl.md, "Training with passatk rewards"), as printed."""
    text = open(README, encoding="utf-8").read()
    block = next(b for b in text.split("```bash\n")[1:] if b.startswith("python3 -m verl.trainer.main_ppo"))
    block = block.split("```")[0]
    return [tok for line in block.splitlines()[1:] for tok in line.replace("\\", " ").split() if "=" in tok]


def test_readme_config_composes_with_verls_own():
    """The README's command line is valid for veRL's ppo_trainer config, and what it names loads and registers."""
    hydra = pytest.importorskip("hydra", reason="veRL's config system")
    from verl.trainer.ppo.reward import get_custom_reward_fn

    overrides = _readme_overrides()
    assert any(o.startswith("+ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=") for o in overrides)
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with hydra.initialize_config_dir(config_dir=config_dir, version_base=None):
        config = hydra.compose("ppo_trainer", overrides=overrides)
    fn = get_custom_reward_fn(config)
    assert fn.args[0] is ours.acompute_score and fn.args[1] == {"workers": 8}
    assert ours._estimator_options(config.algorithm) == (8, "loo_minus_one", "shrink")
    hook = config.ray_kwargs.ray_init.runtime_env.worker_process_setup_hook
    module, name = hook.rsplit(".", 1)
    getattr(__import__(module, fromlist=[name]), name)()
    assert core_algos.get_adv_estimator_fn(config.algorithm.adv_estimator) is ours.pass_at_k_advantage

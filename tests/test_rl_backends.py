"""passatk.rl on torch and jax: the numbers of numpy, the library, dtype and device of the input."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("array_api_compat", reason="passatk.rl needs the rl extra (pip install 'passatk[rl]')")

from passatk.rl import (  # noqa: E402
    ESTIMATORS,
    pass_at_k_weights,
    trl_pass_at_k_advantages,
    verl_advantage_estimator,
)

RNG = np.random.default_rng(2026)
REAL = RNG.random((64, 16))
BINARY = RNG.random((64, 16)) < 0.3
# rewards far from 0 with small spread: the baselined weights cancel ~1000 down to ~1e-3,
# which float32 arithmetic cannot do but float64 can
OFFSET = (1000.0 + RNG.random((8, 16)) * 1e-2).astype(np.float32)


def _cases():
    for estimator in ESTIMATORS:
        yield estimator, BINARY, 5
        if estimator != "chen":
            yield estimator, REAL, 5


CASES = list(_cases())
IDS = [f"{e}-{'bool' if r.dtype == bool else 'real'}" for e, r, _ in CASES]


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="torch not installed (pip install 'passatk[torch]')")


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax", reason="jax not installed (pip install 'passatk[jax]')")


def _devices(torch):
    yield "cpu"
    if torch.cuda.is_available():
        yield "cuda"


class TestTorch:
    @pytest.mark.parametrize(("estimator", "rewards", "k"), CASES, ids=IDS)
    def test_same_numbers_as_numpy(self, torch, estimator, rewards, k):
        """float64 tensors give numpy's weights to 1e-14; bool ones the same, rounded to torch's default float."""
        want = pass_at_k_weights(rewards, k, estimator=estimator)
        rounding = np.finfo(np.float32).eps if torch.get_default_dtype() == torch.float32 else 1e-14
        rtol = rounding if rewards.dtype == bool else 1e-14
        for device in _devices(torch):
            got = pass_at_k_weights(torch.as_tensor(rewards, device=device), k, estimator=estimator)
            assert isinstance(got, torch.Tensor) and got.device.type == device
            np.testing.assert_allclose(got.cpu().double().numpy(), want, rtol=rtol, atol=1e-15)

    def test_dtypes(self, torch):
        """Floating tensors keep their dtype; bool and int tensors give torch's default float."""
        default = torch.get_default_dtype()
        for dtype, expected in [
            (torch.bool, default),
            (torch.int64, default),
            (torch.float32, torch.float32),
            (torch.float64, torch.float64),
            (torch.bfloat16, torch.bfloat16),
        ]:
            assert pass_at_k_weights(torch.as_tensor(BINARY).to(dtype), 3).dtype == expected

    def test_float32_input_is_computed_in_float64(self, torch):
        """float32 rewards near 1000: weights equal numpy's float64 result rounded to float32."""
        want = pass_at_k_weights(OFFSET.astype(np.float64), 4).astype(np.float32)
        got = pass_at_k_weights(torch.from_numpy(OFFSET), 4)
        assert np.abs(want).max() > 1e-4
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-9)

    def test_index_as_tensor_and_ragged_groups(self, torch):
        """An integer tensor index groups a flat tensor batch like a numpy index does."""
        rewards = RNG.random(11)
        index = np.array([3, 3, 3, 0, 0, 0, 0, 7, 7, 7, 7])
        want = pass_at_k_weights(rewards, 3, index=index)
        got = pass_at_k_weights(torch.from_numpy(rewards), 3, index=torch.from_numpy(index))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)

    def test_verl_adapter_on_tensors(self, torch):
        """The veRL estimator takes torch tensors and a numpy uid array and returns (bs, T) tensors."""
        fn = verl_advantage_estimator(k=2)
        scores = torch.tensor([1.0, 0.0, 1.0, 0.0, 0.0, 0.0])
        token_rewards = torch.zeros(6, 3)
        token_rewards[:, -1] = scores
        mask = torch.ones(6, 3, dtype=torch.int64)
        mask[0, 0] = 0
        uid = np.array(["x", "x", "x", "y", "y", "y"], dtype=object)
        adv, returns = fn(token_level_rewards=token_rewards, response_mask=mask, index=uid, config=None)
        assert adv.shape == (6, 3) and adv.dtype == torch.float32 and returns is adv
        want = 3 * pass_at_k_weights(scores.numpy().astype(np.float64), 2, index=uid)
        np.testing.assert_allclose(adv[:, 1].numpy(), want, rtol=1e-6)
        assert adv[0, 0] == 0

    def test_trl_recipe_on_tensors(self, torch):
        """The TRL helper keeps a float32 tensor a float32 tensor of the same shape."""
        rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])
        got = trl_pass_at_k_advantages(rewards, num_generations=3, k=2)
        assert isinstance(got, torch.Tensor) and got.shape == (6,) and got.dtype == torch.float32
        want = trl_pass_at_k_advantages(rewards.numpy().astype(np.float64), num_generations=3, k=2)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


class TestJax:
    @pytest.mark.parametrize(("estimator", "rewards", "k"), CASES, ids=IDS)
    def test_same_numbers_as_numpy_with_x64(self, jax, estimator, rewards, k):
        """With jax's float64 enabled, jax arrays give numpy's weights to 1e-14."""
        import jax.numpy as jnp

        want = pass_at_k_weights(rewards, k, estimator=estimator)
        with jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64():
            got = pass_at_k_weights(jnp.asarray(rewards), k, estimator=estimator)
            assert isinstance(got, jax.Array)
            np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=1e-14, atol=1e-15)

    def test_default_float32_is_computed_in_float64(self, jax):
        """Without x64, float32 jax input still goes through float64: numpy's result rounded to float32."""
        import jax.numpy as jnp

        got = pass_at_k_weights(jnp.asarray(OFFSET), 4)
        assert got.dtype == jnp.float32
        want = pass_at_k_weights(OFFSET.astype(np.float64), 4).astype(np.float32)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-9)

    def test_bool_input_gives_the_default_float_and_keeps_the_device(self, jax):
        """Bool jax input gives jax's default float, on the input's device."""
        import jax.numpy as jnp

        rewards = jnp.asarray(BINARY)
        got = pass_at_k_weights(rewards, 3, index=None)
        assert got.dtype == jnp.zeros(()).dtype and got.devices() == rewards.devices()
        np.testing.assert_allclose(np.asarray(got), pass_at_k_weights(BINARY, 3), rtol=1e-6)

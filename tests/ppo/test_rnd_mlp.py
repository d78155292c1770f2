"""RND's MLP torso: the whole (symbolic) observation, any shape, learned and novel inputs."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from agents.ppo.exploration.rnd import RND, choose_torso

SHAPE = (7, 7, 3)  # MiniGrid's symbolic view.


def _views(seed, n):
    return np.random.default_rng(seed).integers(0, 11, (n, *SHAPE)).astype(np.float32)


def test_auto_chooses_the_conv_stack_for_frames_and_the_mlp_otherwise():
    assert choose_torso((56, 56, 1)) == "conv"
    assert choose_torso((84, 84, 4)) == "conv"
    assert choose_torso((7, 7, 3)) == "mlp"
    assert choose_torso((10,)) == "mlp"
    assert choose_torso((84, 84, 4), "mlp") == "mlp"


def test_mlp_torso_reads_every_channel_and_learns_what_it_saw():
    rnd = RND(SHAPE, feature_size=16, torso="mlp", torso_width=32)
    assert rnd.observation_stats.shape == SHAPE
    # Target: 2 torso layers + 1 output; predictor: 2 torso layers + 3 dense (kernel, bias).
    assert len(rnd.target.variables) == 2 * 3 and len(rnd.trainable_variables) == 2 * 5
    seen = _views(0, 64)
    rnd.initialize_observation_stats(np.concatenate([seen, _views(1, 256)]))
    changed = seen.copy()
    changed[..., 0] = 10 - changed[..., 0]  # Not the last channel: the conv stack ignores it.
    assert not np.allclose(rnd.intrinsic_reward(changed), rnd.intrinsic_reward(seen))

    optimizer = keras.optimizers.Adam(3e-3)

    @tf.function
    def train_step(views):
        with tf.GradientTape() as tape:
            loss = rnd.predictor_loss(views)
        grads = tape.gradient(loss, rnd.trainable_variables)
        optimizer.apply_gradients(zip(grads, rnd.trainable_variables, strict=True))
        return loss

    losses = [float(train_step(seen)) for _ in range(150)]
    assert losses[-1] < 0.1 * losses[0], losses[::30]
    novel = rnd.intrinsic_reward(_views(2, 64)).numpy()
    assert rnd.intrinsic_reward(seen.reshape(8, 8, *SHAPE)).shape == (8, 8)
    assert novel.mean() > 3.0 * rnd.intrinsic_reward(seen).numpy().mean()


def test_conv_torso_refuses_a_symbolic_view_naming_the_mlp():
    with pytest.raises(ValueError, match="rnd_network=mlp"):
        RND(SHAPE, torso="conv")

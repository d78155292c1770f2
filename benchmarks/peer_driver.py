"""A published MiniGrid PPO beside ours: rl-starter-files' PPO (torch-ac's `PPOAlgo`) as its
`scripts/train.py` runs it by default; runs from the repository's root under a Python that has
torch-ac and minigrid.

    python -m benchmarks.peer_driver ENV_ID FRAMES SEED  # prints one JSON line

The defaults of rl-starter-files' `train.py --algo ppo`: 16 environments stepped in processes
(torch-ac's `ParallelEnv`), 128 frames per process per update, 4 epochs of batches of 256, discount
0.99, learning rate 1e-3, GAE lambda 0.95, entropy 0.01, value 0.5, gradient norm 0.5, clip 0.2, no
memory and no text (its model still takes torch-ac's recurrent path); its network: three 2x2
convolutions (16, 32, 64 channels, a 2x2 max-pool after the first) on the 7x7x3 view, then actor and
critic heads of 64 tanh units. Observations are prepared as its `get_obss_preprocessor` does for
MiniGrid's dicts (the image as a float tensor, the mission's words indexed). Torch keeps its default
threads. It imports nothing of `agents` or of the other benchmarks.
"""

from __future__ import annotations

import json
import re
import sys
import time


def _network(image_shape, actions: int):
    import torch
    import torch_ac
    from torch import nn
    from torch.distributions.categorical import Categorical

    rows, cols = image_shape[0], image_shape[1]
    embedding = ((rows - 1) // 2 - 2) * ((cols - 1) // 2 - 2) * 64

    def head(outputs: int) -> nn.Module:
        return nn.Sequential(nn.Linear(embedding, 64), nn.Tanh(), nn.Linear(64, outputs))

    class Network(nn.Module, torch_ac.RecurrentACModel):  # As rl-starter-files' ACModel.
        def __init__(self) -> None:
            super().__init__()
            self.image_conv = nn.Sequential(
                nn.Conv2d(3, 16, (2, 2)), nn.ReLU(), nn.MaxPool2d((2, 2)),
                nn.Conv2d(16, 32, (2, 2)), nn.ReLU(),
                nn.Conv2d(32, 64, (2, 2)), nn.ReLU(),
            )  # fmt: skip
            self.actor, self.critic = head(actions), head(1)
            for module in self.modules():  # Row-normalized Gaussian weights, zero biases.
                if isinstance(module, nn.Linear):
                    module.weight.data.normal_(0, 1)
                    module.weight.data /= module.weight.data.pow(2).sum(1, keepdim=True).sqrt()
                    module.bias.data.fill_(0)

        @property
        def memory_size(self) -> int:  # Carried through torch-ac's recurrent path, unused.
            return 2 * embedding

        def forward(self, obs, memory):
            x = self.image_conv(obs.image.permute(0, 3, 1, 2)).reshape(len(obs.image), -1)
            logits = torch.log_softmax(self.actor(x), dim=1)
            return Categorical(logits=logits), self.critic(x).squeeze(1), memory

    return Network()


def _preprocessor():
    """MiniGrid dicts to torch-ac's DictList: the image, and the mission's words as indices."""
    import numpy as np
    import torch
    import torch_ac

    vocabulary: dict[str, int] = {}

    def words(text: str) -> list[int]:
        found = re.findall("([a-z]+)", text.lower())
        return [vocabulary.setdefault(word, len(vocabulary) + 1) for word in found]

    def prepare(observations, device=None):
        images = torch.tensor(np.array([o["image"] for o in observations]), dtype=torch.float)
        indexed = [words(o["mission"]) for o in observations]
        texts = np.zeros((len(indexed), max(map(len, indexed))))
        for row, index in enumerate(indexed):
            texts[row, : len(index)] = index
        return torch_ac.DictList({"image": images, "text": torch.tensor(texts, dtype=torch.long)})

    return prepare


def train(env_id: str, frames: int, seed: int) -> dict:
    """Trains until `frames` env steps; returns the frames, the training loop's seconds and the
    mean return of the episodes that ended in the last update."""
    import random

    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the MiniGrid ids)
    import numpy as np
    import torch
    import torch_ac

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    envs = []
    for index in range(16):
        env = gym.make(env_id)
        env.reset(seed=seed + 10000 * index)
        envs.append(env)
    network = _network(envs[0].observation_space["image"].shape, envs[0].action_space.n)
    algo = torch_ac.PPOAlgo(
        envs, network, torch.device("cpu"), 128, 0.99, 1e-3, 0.95, 0.01, 0.5, 0.5, 1, 1e-8,
        0.2, 4, 256, _preprocessor(),
    )  # fmt: skip
    start, done, returns = time.perf_counter(), 0, []
    while done < frames:
        experiences, logs = algo.collect_experiences()
        algo.update_parameters(experiences)
        done += logs["num_frames"]
        returns = logs["return_per_episode"]
    return dict(
        frames=done,
        loop_seconds=time.perf_counter() - start,
        final_return=float(np.mean(returns)) if returns else 0.0,
    )


if __name__ == "__main__":
    env_id, frames, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print(json.dumps(train(env_id, frames, seed)), flush=True)

"""Gymnasium wrappers that bring dict observations and action masks into the batch pipeline."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agents.tools import dict_observations
from agents.tools.dict_observations import MASK_KEY, PackedDict


class PackDictObservation(gym.ObservationWrapper):
    """Observes a dict env's observations packed (`dict_observations.pack`) in a `PackedDict`.

    A packed action mask that allows no action (for a MultiDiscrete action space, no choice of
    one of its entries) is refused with one line at the step that made it.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.observation_space = PackedDict(env.observation_space)
        self._dict_space = env.observation_space
        # Read once: each step checks only the mask's entries.
        self._mask = dict_observations.mask_field(self.observation_space)
        nvec = getattr(env.action_space, "nvec", None)  # Each entry of a MultiDiscrete needs one.
        self._groups = None if nvec is None else np.asarray(nvec).reshape(-1).tolist()

    def observation(self, observation: Any) -> np.ndarray:
        packed = dict_observations.pack(self._dict_space, observation, batched=False)
        if self._mask is None:
            return packed
        empty = dict_observations.first_empty_mask(self._mask, packed[None], self._groups)
        if empty is not None:
            raise ValueError(
                f"The env's {MASK_KEY!r} allows no action: "
                f"{np.asarray(observation[MASK_KEY]).tolist()}."
            )
        return packed


class InfoActionMask(gym.Wrapper):
    """Moves gymnasium's `info["action_mask"]` into the observation, as its `action_mask` key.

    The observation becomes a dict: the env's own keys if it observes a dict, else its
    observation under "observation"; the mask is a MultiBinary with an entry per action of a
    Discrete action space, or per category of each entry of a MultiDiscrete one (concatenated).
    Reset and every step must give the mask (as gymnasium's Taxi does).
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        action_space = env.action_space
        if isinstance(action_space, gym.spaces.Discrete):
            size = int(action_space.n)
        elif isinstance(action_space, gym.spaces.MultiDiscrete) and action_space.nvec.ndim == 1:
            size = int(action_space.nvec.sum())
        else:
            raise ValueError(
                f"An action mask needs a Discrete or 1-D MultiDiscrete action space, not "
                f"{action_space!r}."
            )
        own = env.observation_space
        keys = dict(own.spaces) if isinstance(own, gym.spaces.Dict) else {"observation": own}
        keys[MASK_KEY] = gym.spaces.MultiBinary(size)
        self.observation_space = gym.spaces.Dict(keys)
        self._size = size

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        observation, info = self.env.reset(**kwargs)
        return self._with_mask(observation, info, "reset"), info

    def step(self, action: Any) -> tuple:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return self._with_mask(observation, info, "step"), reward, terminated, truncated, info

    def _with_mask(self, observation: Any, info: dict, where: str) -> dict:
        if MASK_KEY not in info:
            raise ValueError(
                f"The env's {where} gave no info[{MASK_KEY!r}]; the info_action_mask wrapper "
                "needs it at reset and at every step."
            )
        mask = np.asarray(info[MASK_KEY]).astype(np.int8).reshape(-1)
        if mask.shape != (self._size,):
            raise ValueError(
                f"info[{MASK_KEY!r}] has {mask.size} entries; the action space takes {self._size}."
            )
        keys = dict(observation) if isinstance(observation, dict) else {"observation": observation}
        keys[MASK_KEY] = mask
        return keys

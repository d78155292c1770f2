"""Packing dict observations: equal to gymnasium's `flatten`, by key, with the action mask."""

import gymnasium as gym
import numpy as np
import pytest

from agents.tools import dict_observations
from agents.tools.dict_observations import MASK_KEY, PackedDict, fields, pack
from agents.tools.observation_wrappers import InfoActionMask, PackDictObservation

SPACE = gym.spaces.Dict(
    {
        "image": gym.spaces.Box(0, 255, (5, 4, 3), np.uint8),
        "vector": gym.spaces.Box(-2.0, 2.0, (2, 3), np.float32),
        "direction": gym.spaces.Discrete(4, start=1),
        "choices": gym.spaces.MultiDiscrete([2, 3], start=[0, -1]),
        "flags": gym.spaces.MultiBinary(3),
        MASK_KEY: gym.spaces.MultiBinary(5),
    }
)


def test_pack_equals_gymnasium_flatten_one_by_one_and_in_batches():
    SPACE.seed(0)
    samples = [SPACE.sample() for _ in range(6)]
    expected = np.stack([gym.spaces.flatten(SPACE, sample) for sample in samples])
    for sample, row in zip(samples, expected):
        np.testing.assert_array_equal(pack(SPACE, sample, batched=False), row)
    batch = {key: np.stack([sample[key] for sample in samples]) for key in SPACE.spaces}
    packed = pack(SPACE, batch, batched=True)
    assert packed.dtype == np.float32 and packed.shape == (6, PackedDict(SPACE).shape[0])
    np.testing.assert_array_equal(packed, expected)


def test_pack_hand_computed_case():
    space = gym.spaces.Dict(
        {
            "a": gym.spaces.Discrete(3, start=1),
            "b": gym.spaces.Box(-1.0, 1.0, (2,)),
            "c": gym.spaces.MultiDiscrete([2, 2]),
        }
    )
    packed = pack(space, {"a": 3, "b": [0.5, -1.0], "c": [1, 0]}, batched=False)
    np.testing.assert_array_equal(packed, [0, 0, 1, 0.5, -1.0, 0, 1, 1, 0])


def test_fields_give_each_key_its_place_kind_and_normalization():
    layout = {field.key: field for field in fields(SPACE)}
    assert [field.key for field in fields(SPACE)] == list(SPACE.spaces)  # gymnasium sorts.
    assert layout["image"].kind == "image" and layout["image"].shape == (5, 4, 3)
    assert layout["vector"].kind == "vector" and layout["vector"].size == 6
    assert layout["direction"].kind == "discrete" and layout["direction"].categories == (4,)
    assert layout["choices"].categories == (2, 3) and layout["choices"].size == 5
    assert layout["flags"].kind == "binary" and layout[MASK_KEY].kind == "mask"
    ends = [field.start + field.size for field in fields(SPACE)]
    assert [field.start for field in fields(SPACE)][1:] == ends[:-1]
    normalized = dict_observations.normalized_entries(PackedDict(SPACE))
    for field in fields(SPACE):
        chunk = normalized[field.start : field.start + field.size]
        assert chunk.all() == (field.key in ("image", "vector")) and chunk.all() == chunk.any()
    assert dict_observations.normalized_entries(gym.spaces.Box(0, 1, (3,))) is None


def test_a_float_box_of_image_shape_is_a_vector():
    space = gym.spaces.Dict({"x": gym.spaces.Box(0.0, 1.0, (8, 8, 3), np.float32)})
    assert fields(space)[0].kind == "vector"


@pytest.mark.parametrize(
    "observ, message",
    [
        ({"a": 1}, "lacks the keys b"),
        (
            {"a": 3, "b": [0.0, 0.0]},
            "'a' holds 3 (from the space's start); it takes integers 0 to 2",
        ),
        ({"a": 1, "b": [0.0]}, "'b' of shape (1,); the space takes (2,)"),
        ([1, 2], "this env observes a dict with keys a, b"),
    ],
)
def test_pack_refuses_what_does_not_fit_in_one_line(observ, message):
    space = gym.spaces.Dict({"a": gym.spaces.Discrete(3), "b": gym.spaces.Box(-1, 1, (2,))})
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pack(space, observ, batched=False)


def test_unsupported_keys_and_masks_are_refused_by_name():
    text = gym.spaces.Dict({"mission": gym.spaces.Text(10), "x": gym.spaces.Discrete(2)})
    with pytest.raises(ValueError, match="key 'mission' is a Text"):
        PackedDict(text)
    mask = gym.spaces.Dict({MASK_KEY: gym.spaces.Discrete(4)})
    with pytest.raises(ValueError, match="an action mask is a MultiBinary"):
        PackedDict(mask)


def test_a_description_packs_as_the_space_it_describes():
    described = dict_observations.from_description(dict_observations.describe(SPACE))
    SPACE.seed(1)
    sample = SPACE.sample()
    np.testing.assert_array_equal(
        pack(described, sample, batched=False), pack(SPACE, sample, batched=False)
    )


class _MaskedEnv(gym.Env):
    """Observes its step count; its legal actions change each step (mask in info, or not)."""

    observation_space = gym.spaces.Box(0.0, 100.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, empty_at=None, info_mask=True):
        self._empty_at, self._info_mask, self._t = empty_at, info_mask, 0

    def _info(self):
        mask = np.zeros(3, np.int8)
        if self._t != self._empty_at:
            mask[self._t % 3] = mask[(self._t + 1) % 3] = 1
        return {MASK_KEY: mask} if self._info_mask else {}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._t = 0
        return np.zeros(1, np.float32), self._info()

    def step(self, action):
        self._t += 1
        return np.array([self._t], np.float32), 0.0, False, False, self._info()


def test_info_action_mask_moves_the_mask_into_the_packed_observation():
    env = PackDictObservation(InfoActionMask(_MaskedEnv()))
    assert env.observation_space.dict_space.spaces.keys() == {MASK_KEY, "observation"}
    observ, _ = env.reset()
    np.testing.assert_array_equal(observ, [1, 1, 0, 0])  # Mask first (sorted), then the count.
    for t in range(1, 5):
        observ, *_ = env.step(0)
        expected = np.zeros(3)
        expected[[t % 3, (t + 1) % 3]] = 1
        np.testing.assert_array_equal(observ, [*expected, t])


def test_a_mask_that_allows_nothing_or_is_missing_is_one_line():
    env = PackDictObservation(InfoActionMask(_MaskedEnv(empty_at=2)))
    env.reset()
    env.step(0)
    with pytest.raises(ValueError, match=r"'action_mask' allows no action: \[0, 0, 0\]"):
        env.step(0)
    with pytest.raises(ValueError, match=r"reset gave no info\['action_mask'\]"):
        InfoActionMask(_MaskedEnv(info_mask=False)).reset()


def test_gymnasium_taxi_masks_through_the_wrapper():
    env = PackDictObservation(InfoActionMask(gym.make("Taxi-v4")))
    observ, info = env.reset(seed=3)
    np.testing.assert_array_equal(observ[:6], info[MASK_KEY])
    assert observ[6:].sum() == 1 and observ.shape == (506,)  # One-hot of 500 states.


def test_a_multi_discrete_mask_needs_a_choice_for_each_entry():
    space = PackedDict(
        gym.spaces.Dict({MASK_KEY: gym.spaces.MultiBinary(5), "x": gym.spaces.Discrete(2)})
    )
    rows = np.array([[1, 0, 0, 1, 0, 1, 0], [1, 1, 0, 0, 0, 1, 0]], np.float32)
    field = dict_observations.mask_field(space)
    assert dict_observations.first_empty_mask(field, rows) is None  # Something allowed in each.
    assert dict_observations.first_empty_mask(field, rows, groups=[2, 3]) == 1  # Entry 1: none.
    assert dict_observations.first_empty_mask(field, rows[:1], groups=[2, 3]) is None

"""Dict observations packed into one float32 vector, and the layout that unpacks them by key.

The pipeline (batch envs, rollout buffer, normalizer, checkpoints) carries one observation
tensor; a `gymnasium.spaces.Dict` observation travels packed, exactly as
`gymnasium.spaces.flatten` packs it (keys in the space's order, Box entries flattened, Discrete
and MultiDiscrete entries one-hot, MultiBinary entries as they are) in float32, and the network
unpacks it by key (`fields`). A deployment without `agents` packs its dicts with gymnasium's
`flatten`. The key `action_mask` (`MASK_KEY`) is the action mask: the network reads no
features from it, the policy samples only the actions it allows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

MASK_KEY = "action_mask"

# Kinds of fields: an image (a uint8 Box of shape (H, W, C)), a vector (any other Box), a
# one-hot of a Discrete or of each entry of a MultiDiscrete, a MultiBinary, and the action mask.
KINDS = ("image", "vector", "discrete", "binary", "mask")
_LEAVES = "Box, Discrete, MultiDiscrete or MultiBinary"


class Field(NamedTuple):
    """Where a key's entries lie in the packed vector, and how the network reads them.

    Attributes:
        key: The dict key.
        kind: One of `KINDS`.
        start: Index of the first entry in the packed vector.
        size: Number of entries.
        shape: The shape the encoder reads: (H, W, C) for an image, (size,) otherwise.
        categories: For "discrete": the number of categories of each one-hot, else ().
    """

    key: str
    kind: str
    start: int
    size: int
    shape: tuple[int, ...]
    categories: tuple[int, ...] = ()

    @property
    def normalized(self) -> bool:
        """Whether running normalization applies (Box keys; one-hots and masks stay raw)."""
        return self.kind in ("image", "vector")


class PackedDict(gym.spaces.Box):
    """The float32 Box of a packed dict observation; `dict_space` is the dict it packs."""

    def __init__(self, dict_space: gym.spaces.Dict) -> None:
        check_space(dict_space)
        self.dict_space = dict_space
        flat = gym.spaces.flatten_space(dict_space)
        super().__init__(
            flat.low.astype(np.float32), flat.high.astype(np.float32), dtype=np.float32
        )

    def __repr__(self) -> str:
        return f"PackedDict({self.dict_space!r})"


def check_space(space: gym.Space) -> None:
    """Raise ValueError naming the first key `agents` cannot pack, or a bad action mask."""
    if not isinstance(space, gym.spaces.Dict):
        raise ValueError(f"Observation space {space!r}: a packed observation is a Dict.")
    leaves = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)
    for key, sub in space.spaces.items():
        if not isinstance(sub, leaves):
            raise ValueError(
                f"Observation key {key!r} is a {type(sub).__name__}; dict observations take "
                f"{_LEAVES} keys (drop or encode the others with a wrapper)."
            )
        if isinstance(sub, gym.spaces.MultiDiscrete) and sub.nvec.ndim != 1:
            raise ValueError(f"Observation key {key!r}: a MultiDiscrete key needs a 1-D nvec.")
    mask = space.spaces.get(MASK_KEY)
    if mask is not None and not (
        isinstance(mask, gym.spaces.MultiBinary)
        or (isinstance(mask, gym.spaces.Box) and len(mask.shape) == 1)
    ):
        raise ValueError(
            f"Observation key {MASK_KEY!r} is {mask!r}; an action mask is a MultiBinary(n) or a "
            "Box of shape (n,) with an entry per action (1 allowed, 0 not)."
        )


def fields(space: gym.spaces.Dict | PackedDict) -> list[Field]:
    """The fields of a dict space (or of the `PackedDict` of one), in packing order."""
    if isinstance(space, PackedDict):
        space = space.dict_space
    check_space(space)
    result, start = [], 0
    for key, sub in space.spaces.items():
        size = int(gym.spaces.flatdim(sub))
        shape, categories = (size,), ()
        if key == MASK_KEY:
            kind = "mask"
        elif isinstance(sub, gym.spaces.Box):
            kind = "image" if _is_image(sub) else "vector"
            shape = tuple(int(n) for n in sub.shape) if kind == "image" else shape
        elif isinstance(sub, gym.spaces.Discrete):
            kind, categories = "discrete", (int(sub.n),)
        elif isinstance(sub, gym.spaces.MultiDiscrete):
            kind, categories = "discrete", tuple(int(n) for n in sub.nvec)
        else:
            kind = "binary"
        result.append(Field(key, kind, start, size, shape, categories))
        start += size
    return result


def _is_image(space: gym.spaces.Box) -> bool:
    """An image as Stable-Baselines3 tells one: uint8 (H, W, C) with bounds 0 and 255."""
    return (
        space.dtype == np.uint8
        and len(space.shape) == 3
        and bool(np.all(space.low == 0))
        and bool(np.all(space.high == 255))
    )


def mask_field(space: gym.Space) -> Field | None:
    """The action mask's field of a packed dict space, or None (no mask, or not a dict)."""
    if not isinstance(space, PackedDict):
        return None
    return next((field for field in fields(space) if field.kind == "mask"), None)


def normalized_entries(space: gym.Space) -> np.ndarray | None:
    """Bool [size]: the entries of a packed dict that running normalization applies to (those
    of its Box keys); None for any other space (all entries are normalized)."""
    if not isinstance(space, PackedDict):
        return None
    return np.concatenate([np.full(field.size, field.normalized) for field in fields(space)])


def pack(space: gym.spaces.Dict, observ: Mapping[str, Any], batched: bool) -> np.ndarray:
    """Packs a dict observation (or a dict of batches) as `gymnasium.spaces.flatten` does.

    Args:
        space: The dict space.
        observ: Key -> value, one observation or (with `batched`) arrays with a leading batch axis.
        batched: Whether the values have a leading batch axis.

    Returns:
        float32 [size] for one observation, [batch, size] for a batch.

    Raises:
        ValueError: For a missing key, or a value of the wrong shape or out of its categories.
    """
    if not isinstance(observ, Mapping):
        raise ValueError(
            f"Observation of type {type(observ).__name__}: this env observes a dict with keys "
            f"{', '.join(space.spaces)}."
        )
    missing = [key for key in space.spaces if key not in observ]
    if missing:
        raise ValueError(
            f"Observation lacks the keys {', '.join(missing)}: this env observes "
            f"{', '.join(space.spaces)}."
        )
    parts = [_pack_key(key, sub, observ[key], batched) for key, sub in space.spaces.items()]
    batch = {part.shape[0] for part in parts}
    if len(batch) > 1:
        raise ValueError(f"Observation keys of different batch sizes {sorted(batch)}.")
    packed = np.concatenate(parts, axis=1)
    return packed if batched else packed[0]


def _pack_key(key: str, space: gym.Space, value: Any, batched: bool) -> np.ndarray:
    value = np.asarray(value)
    value = value if batched else value[None]
    shape = space.shape
    if isinstance(space, gym.spaces.Discrete):
        value = value.reshape(-1)
        return _one_hot(key, value - space.start, int(space.n))
    if value.shape[1:] != tuple(shape):
        raise ValueError(
            f"Observation key {key!r} of shape {value.shape[1:]}; the space takes {tuple(shape)}."
        )
    if isinstance(space, gym.spaces.MultiDiscrete):
        offsets = value - space.start
        return np.concatenate(
            [_one_hot(key, offsets[:, i], int(n)) for i, n in enumerate(space.nvec)], axis=1
        )
    return value.reshape(len(value), -1).astype(np.float32)


def _one_hot(key: str, index: np.ndarray, n: int) -> np.ndarray:
    index = np.asarray(index)
    integer = np.issubdtype(index.dtype, np.integer)
    bad = index[(index < 0) | (index >= n)] if integer else index
    if bad.size:
        raise ValueError(
            f"Observation key {key!r} holds {bad.flat[0].item()!r} (from the space's start); "
            f"it takes integers 0 to {n - 1}."
        )
    one_hot = np.zeros((len(index), n), np.float32)
    one_hot[np.arange(len(index)), index.astype(np.int64)] = 1.0
    return one_hot


def first_empty_mask(
    field: Field, packed: np.ndarray, groups: Sequence[int] | None = None
) -> int | None:
    """The first row of a packed batch whose action mask (at `field`, see `mask_field`) allows
    no action, or None.

    With `groups` (a MultiDiscrete action space's `nvec`), each entry's choices must allow one.
    """
    allowed = packed[:, field.start : field.start + field.size] > 0.5
    sizes = [field.size] if groups is None else [int(n) for n in groups]
    if sum(sizes) != field.size:
        return None  # A size that does not fit: the network refuses it, naming both.
    parts = np.split(allowed, np.cumsum(sizes)[:-1], axis=1)
    empty = np.flatnonzero(~np.all([part.any(axis=1) for part in parts], axis=0))
    return int(empty[0]) if len(empty) else None


def describe(space: gym.spaces.Dict) -> str:
    """JSON of what packing `space` needs (keys, kinds, shapes, categories), for exports."""
    keys = []
    for key, sub in space.spaces.items():
        entry: dict[str, Any] = {"key": key, "type": type(sub).__name__}
        if isinstance(sub, gym.spaces.Box):
            entry.update(shape=list(sub.shape), dtype=str(sub.dtype))
        elif isinstance(sub, gym.spaces.Discrete):
            entry.update(n=int(sub.n), start=int(sub.start))
        elif isinstance(sub, gym.spaces.MultiDiscrete):
            entry.update(nvec=sub.nvec.tolist(), start=sub.start.tolist())
        else:
            entry.update(n=list(sub.shape))
        keys.append(entry)
    return json.dumps(keys)


def from_description(text: str) -> gym.spaces.Dict:
    """A dict space that packs as the one `describe` described (Box bounds are not kept)."""
    spaces = {}
    for entry in json.loads(text):
        kind = entry["type"]
        if kind == "Box":
            dtype = np.dtype(entry["dtype"])
            info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else np.finfo(dtype)
            sub = gym.spaces.Box(info.min, info.max, tuple(entry["shape"]), dtype)
        elif kind == "Discrete":
            sub = gym.spaces.Discrete(entry["n"], start=entry["start"])
        elif kind == "MultiDiscrete":
            sub = gym.spaces.MultiDiscrete(entry["nvec"], start=entry["start"])
        else:
            sub = gym.spaces.MultiBinary(entry["n"])
        spaces[entry["key"]] = sub
    return gym.spaces.Dict(spaces)

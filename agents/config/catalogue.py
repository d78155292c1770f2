"""The catalogues of what a config names: agents and networks, one table each.

Each entry says where its code lives as "module:attribute", imported only when a run builds it,
so the schema, validation, `--help`, the agent factory and the compilation choice read one
table in plain Python (no TensorFlow). A new network is one file plus one row here; a network
outside the package needs no row at all: `network: "my_package.nets:build"` in a config (or
`--set network=my_package.nets:build`) imports it, as `env: "my_package.envs:Thing-v0"` does
for environments.

A network builder is called as `builder(observation_space, action_space, config)` and returns
an `agents.ppo.networks.contract.Network` (see there for the contract).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any


@dataclasses.dataclass(frozen=True)
class AgentEntry:
    """One agent family.

    Attributes:
        builder: "module:attribute" of its class, built as
            `cls(batch_env, config, seed, ranks)` (`ranks`: the MPI ranks' size and
            collectives, `agents.tools.collectives.Ranks`).
        doc: One line for `--help` and the docs.
        xla_update: Whether its update compiles with XLA by default (`update_compiler: auto`);
            else graph mode.
        graph_conv_stacks: Conv stacks (`conv_stack`) for which `auto` means graph mode even
            where `xla_update` is set: XLA's CPU convolutions are slower on them.
        onednn: Whether TensorFlow's oneDNN kernels are on for it (set before TensorFlow loads).
        native_envs: Whether it trains environments written as TensorFlow ops.
    """

    builder: str
    doc: str
    xla_update: bool = True
    graph_conv_stacks: tuple[str, ...] = ()
    onednn: bool = False
    native_envs: bool = True


@dataclasses.dataclass(frozen=True)
class NetworkEntry:
    """One network of the `ppo` agent.

    Attributes:
        builder: "module:attribute" of `builder(observation_space, action_space, config)`.
        doc: One line for `--help` and the docs.
        auto_for: The action space types (gymnasium class names) `network: auto` picks it for.
    """

    builder: str
    doc: str
    auto_for: tuple[str, ...] = ()


AGENTS: dict[str, AgentEntry] = {
    "ppo": AgentEntry(
        "agents.ppo.algorithm:PPO",
        "PPO with the network `network` names.",
    ),
    "rnd_ppo": AgentEntry(
        "agents.ppo.exploration.rnd_agent:RNDPPO",
        "the CNN+GRU pixel agent with random network distillation.",
        # XLA's CPU convolutions of the Atari stack are slower than oneDNN's in graph mode;
        # "tiles8"'s run as matrix products under XLA, faster (see ppo.compilation).
        graph_conv_stacks=("dqn",),
        onednn=True,
    ),
}

NETWORKS: dict[str, NetworkEntry] = {
    "feed_forward_gaussian": NetworkEntry(
        "agents.ppo.networks.mlp:feed_forward_gaussian",
        "MLP torso, Gaussian policy (gSDE with sde_sample_freq).",
        ("Box",),
    ),
    "feed_forward_categorical": NetworkEntry(
        "agents.ppo.networks.mlp:feed_forward_categorical",
        "MLP torso, categorical policy.",
        ("Discrete",),
    ),
    "feed_forward_multi_categorical": NetworkEntry(
        "agents.ppo.networks.mlp:feed_forward_multi_categorical",
        "MLP torso, one categorical per dimension.",
        ("MultiDiscrete",),
    ),
    "recurrent_gaussian": NetworkEntry(
        "agents.ppo.networks.mlp:recurrent_gaussian",
        "MLP torso, a GRU of recurrent_units, Gaussian policy.",
    ),
    "recurrent_categorical": NetworkEntry(
        "agents.ppo.networks.mlp:recurrent_categorical",
        "MLP torso, a GRU of recurrent_units, categorical policy.",
    ),
    "cnn_gru": NetworkEntry(
        "agents.ppo.networks.cnn_gru:cnn_gru",
        "the RND paper's CNN+GRU on image observations, categorical policy (policy_size, ...).",
    ),
}

AUTO = "auto"  # The network name that picks by the action space (`NetworkEntry.auto_for`).


def is_import_path(name: Any) -> bool:
    """Whether `name` is a "module:attribute" path (not a catalogue name)."""
    if not isinstance(name, str) or name.count(":") != 1:
        return False
    module, attribute = name.split(":")
    return all(part.isidentifier() for part in (*module.split("."), attribute))


def load(path: str, what: str) -> Any:
    """The object a "module:attribute" path names.

    Raises:
        ValueError: The module cannot be imported or has no such attribute (one line).
    """
    module_name, attribute = path.split(":")
    try:
        module = importlib.import_module(module_name)  # The module a config names, known only then.
    except ImportError as error:
        raise ValueError(f"{what} {path!r}: cannot import {module_name!r} ({error}).") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ValueError(f"{what} {path!r}: {module_name!r} has no {attribute!r}.") from None


def agent_class(name: str) -> Any:
    """The class of the agent `name`.

    Raises:
        ValueError: `name` is not in `AGENTS`.
    """
    if name not in AGENTS:
        raise ValueError(f"Unknown agent {name!r}; accepted: {', '.join(AGENTS)}.")
    return load(AGENTS[name].builder, "Agent")


def network_builder(name: str, action_space_type: str, shown: str | None = None) -> tuple[str, Any]:
    """The network `name` resolves to for an action space type, and its builder.

    Args:
        name: A catalogue name, "auto", or a "module:attribute" path.
        action_space_type: The gymnasium class name of the action space ("Box", ...).
        shown: The action space as messages show it (default: its type name).

    Raises:
        ValueError: An unknown name, no network for the space under "auto", or a path that
            does not import.
    """
    if name == AUTO:
        found = [n for n, entry in NETWORKS.items() if action_space_type in entry.auto_for]
        if not found:
            accepted = ", ".join(f"{t} -> {n}" for n, e in NETWORKS.items() for t in e.auto_for)
            raise ValueError(
                f"Network 'auto' has no network for the action space {shown or action_space_type}; "
                f"accepted: {accepted}."
            )
        name = found[0]
    if is_import_path(name):
        return name, load(name, "Network")
    if name not in NETWORKS:
        valid = ", ".join([AUTO, *NETWORKS])
        raise ValueError(f"Unknown network {name!r}; valid names: {valid}, or 'module:builder'.")
    return name, load(NETWORKS[name].builder, "Network")

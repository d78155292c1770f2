"""The config schema: every key of a training config, with its type, accepted values and doc.

The one place that says what a config may hold. Validation, `--set` parsing, `--help` and the docs'
config table are generated from it; task configs in `agents/scripts/configs.py` state only what
differs from these defaults. Plain Python, so a bad value is reported before TensorFlow loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.config import catalogue

COMPILERS = ("auto", "xla", "graph")  # How the update is compiled (see agents.ppo.compilation).


AGENTS = tuple(catalogue.AGENTS)


@dataclass(frozen=True)
class Key:
    """One config key.

    Attributes:
        name: The key, as in `config.yaml` and `--set`.
        default: Its value in the `default` config.
        doc: One line saying what it does.
        type: int, float, bool, str or list (of `item` values); taken from `default` when None.
        optional: None is accepted too (it turns the setting off).
        low: Smallest accepted number (or list item), if any.
        high: Largest accepted number, if any.
        open_low: `low` itself is not accepted (> instead of >=).
        choices: The accepted strings, if the set is closed.
        item: Type of a list's items.
        agents: The agents that read the key; `config.yaml` of a run holds only its agent's keys.
        imports: Besides `choices`, a "module:attribute" path is accepted (code of the user's).
    """

    name: str
    default: Any
    doc: str
    type: type | None = None
    optional: bool = False
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    choices: tuple[str, ...] | None = None
    item: type | None = None
    agents: tuple[str, ...] = AGENTS
    imports: bool = False


def _positive(name, default, doc, **kwargs) -> Key:
    return Key(
        name,
        default,
        doc,
        low=0 if isinstance(default, float) else 1,
        open_low=isinstance(default, float),
        **kwargs,
    )


def _unit(name: str, default: float, doc: str, **kwargs: Any) -> Key:
    """A float in [0, 1]."""
    return Key(name, default, doc, type=float, low=0.0, high=1.0, **kwargs)


_PPO = ("ppo",)
_PIXEL = ("rnd_ppo",)
_NETWORKS = (catalogue.AUTO, *catalogue.NETWORKS)
_CNN = ("ppo", "rnd_ppo")  # The CNN+GRU's keys: rnd_ppo's network, and ppo's with network=cnn_gru.

GROUPS: dict[str, tuple[Key, ...]] = {
    "env": (
        Key("env", "Pendulum-v1", "Gymnasium environment id."),
        Key(
            "env_wrapper",
            None,
            "Observation preprocessing (pixels, MiniGrid's dict, an action mask from info).",
            str,
            True,
            choices=(
                "minigrid_pixels",
                "minigrid_image",
                "minigrid_dict",
                "atari",
                "info_action_mask",
            ),
        ),
        Key(
            "native_env",
            False,
            "Step the env id's TensorFlow implementation (agents.envs) in the compiled call.",
        ),
        Key(
            "max_episode_steps",
            None,
            "Time limit in agent steps (an Atari step is 4 frames); None keeps the registered one.",
            int,
            True,
            1,
        ),
        Key(
            "layout_bank",
            None,
            "Native MiniGrid: reset layouts drawn from minigrid's generator (cached on disk); "
            "None: as many as the run can draw (its envs plus its budget), at most 2**20, or "
            "4,096 where minigrid makes few.",
            int,
            True,
            1,
        ),
        _positive("num_agents", 16, "Training environments per process, stepped as one batch."),
        Key(
            "mpi_batch",
            "per_rank",
            "Under mpirun -n K: per_rank steps num_agents envs on every rank (each update sees "
            "K times the batch of one process); global splits num_agents over the ranks (the "
            "batch, and the updates per env step, of one process).",
            choices=("per_rank", "global"),
        ),
        _positive("eval_agents", 8, "Evaluation environments per process."),
        Key("env_processes", False, "Step each environment in its own process."),
        Key(
            "env_backend",
            "python",
            "What steps a gymnasium id's envs: python (BatchEnv), gymnasium-sync, "
            "gymnasium-async (vector envs) or envpool (C++ threads, the envpool extra).",
            choices=("python", "gymnasium-sync", "gymnasium-async", "envpool"),
        ),
        Key(
            "env_timeout",
            300.0,
            "Seconds an env step or reset may take before training stops; None: no limit.",
            float,
            True,
            0.0,
            open_low=True,
        ),
    ),
    "schedule": (
        _positive(
            "train_steps",
            100_000,
            "Training env steps of the run (all ranks), rounded up to whole training calls.",
        ),
        _positive("train_every", 10_000, "Training env steps between evaluation phases."),
        _positive(
            "eval_episodes",
            8,
            "Whole episodes of each evaluation (all ranks), each to its end or time limit.",
        ),
        Key(
            "eval_policy",
            "mode",
            "How evaluation acts: the distribution's mode, or a sample from the evaluator's own "
            "seeded generator (training's draws unchanged). Scores, best policy and curves "
            "follow it; the exported policy offers both.",
            choices=("mode", "sample"),
        ),
        _positive(
            "log_every",
            2_048,
            "Training env steps between train reports (console, metrics.jsonl, TensorBoard), "
            "in whole training calls, and at the end of each train phase.",
        ),
        _positive("checkpoint_every", 20_000, "Training env steps between checkpoints."),
        Key(
            "stop_at_score",
            None,
            "Stop once an evaluation's mean score reaches this; None: never.",
            float,
            True,
        ),
        Key(
            "success_score",
            None,
            "An episode whose return exceeds this is a success: reports add success_rate, the "
            "share of their episodes that were (console, metrics.jsonl, TensorBoard, W&B); "
            "None: none.",
            float,
            True,
        ),
        Key(
            "patience",
            None,
            "Stop after this many evaluations without a new best score; None: never.",
            int,
            True,
            1,
        ),
        Key(
            "keep_best_policy",
            False,
            "Export the policy of each new best evaluation to best_policy/ (with its score).",
        ),
    ),
    "network": (
        Key("agent", "ppo", "ppo, or rnd_ppo: the CNN+GRU pixel agent with RND.", choices=AGENTS),
        Key(
            "network",
            "auto",
            "auto picks by the spaces (rnd_ppo: CNN+GRU on frames); 'module:builder': your own.",
            choices=_NETWORKS,
            imports=True,
        ),
        Key(
            "policy_layers",
            [64, 64],
            "Hidden layer sizes of the policy.",
            item=int,
            low=1,
        ),
        Key(
            "value_layers",
            [64, 64],
            "Hidden layer sizes of the value function.",
            item=int,
            low=1,
        ),
        Key("activation", "tanh", "Keras activation of the hidden layers."),
        _positive("init_std", 1.0, "Initial std of Gaussian policies."),
        Key(
            "sde_sample_freq",
            None,
            "gSDE exploration, its noise matrices redrawn every N rollout steps (0: once per "
            "rollout; init_std: their entries' std). None: fresh noise every step.",
            int,
            optional=True,
            low=0,
        ),
        Key(
            "init_output_factor",
            0.01,
            "Scale of the policy output layer's initial weights.",
            low=0.0,
        ),
        _positive("recurrent_units", 64, "GRU units of recurrent_gaussian."),
    ),
    "optimization": (
        Key("optimizer", "adam", "Keras optimizer name (adam, adamw, rmsprop, sgd, ...)."),
        _positive("learning_rate", 3e-4, "Step size of the optimizer."),
        Key(
            "learning_rate_schedule",
            "constant",
            "linear decays toward zero over the run; update k of N trains at (1 - k/N) times it.",
            choices=("constant", "linear"),
        ),
        Key(
            "max_grad_norm",
            0.5,
            "Global gradient-norm clip; None for no clipping.",
            float,
            True,
            0.0,
            open_low=True,
        ),
        _positive("rollout_length", 128, "Steps per environment between updates."),
        _positive(
            "rollouts_per_call",
            1,
            "Rollouts (each with its update) per compiled training call; more amortize the call.",
        ),
        _positive("chunk_length", 1, "Sequence length of recurrent minibatches; 1: none."),
        _positive("update_epochs", 10, "Passes over each rollout."),
        _positive("num_minibatches", 32, "Minibatches per pass."),
        _unit("discount", 0.99, "Discount of the (extrinsic) return."),
        _unit("gae_lambda", 0.95, "GAE lambda."),
        Key("normalize_advantages", True, "Normalize advantages per rollout."),
        Key(
            "update_compiler",
            "auto",
            "auto: XLA, but graph mode for rnd_ppo with conv_stack dqn (faster for those "
            "convolutions on a CPU).",
            choices=COMPILERS,
        ),
    ),
    "losses": (
        Key(
            "policy_loss",
            "clip",
            "Surrogate objective.",
            choices=("clip", "dual_clip", "kl_penalty"),
        ),
        _positive("clip_ratio", 0.2, "Clipping range of the probability ratio."),
        Key(
            "dual_clip",
            3.0,
            "Lower bound factor of dual_clip (Ye et al. 2020).",
            low=1.0,
            open_low=True,
        ),
        _positive("kl_target", 0.01, "Target KL of kl_penalty."),
        _positive("kl_init_beta", 1.0, "Initial KL coefficient of kl_penalty."),
        Key(
            "kl_cutoff_factor",
            None,
            "Quadratic penalty (x1000) beyond this x kl_target.",
            float,
            True,
            1.0,
            open_low=True,
        ),
        Key(
            "target_kl",
            None,
            "Stop an update's epochs once approx_kl > 1.5 x target_kl.",
            float,
            True,
            0.0,
            open_low=True,
        ),
        Key(
            "value_clip",
            None,
            "Clip value predictions to this range around the old ones.",
            float,
            True,
            0.0,
            open_low=True,
        ),
        Key("value_coef", 0.5, "Weight of the value loss.", low=0.0),
        Key("entropy_coef", 0.0, "Weight of the entropy bonus.", low=0.0),
        Key(
            "entropy_schedule",
            "constant",
            "linear decays entropy_coef toward zero over the run, as learning_rate_schedule "
            "does, so that the final policy's mode acts as its samples do.",
            choices=("constant", "linear"),
        ),
    ),
    "normalization": (
        Key("normalize_observ", True, "Streaming observation normalization (clip 5)."),
        Key("normalize_reward", True, "Scale rewards by the std of the discounted return."),
    ),
    "pixel agent": (
        Key(
            "policy_size",
            "small",
            "Widths x1, x2 or x4.",
            choices=("small", "normal", "large"),
            agents=_CNN,
        ),
        _positive("hidsize", 128, "Dense layer after the convolutions.", agents=_CNN),
        _positive("memsize", 128, "GRU units.", agents=_CNN),
        Key("extrahid", True, "Residual layers after the GRU.", agents=_CNN),
        Key("rec_gate_init", 0.0, "Bias of the GRU's gates at start.", agents=_CNN),
        Key(
            "conv_stack",
            "dqn",
            "Convolutions of the CNN+GRU and of RND's conv torso: dqn (the RND paper's, for "
            "Atari frames), tiles8 (one conv per 8x8 tile: MiniGrid's frames).",
            choices=("dqn", "tiles8"),
            agents=_CNN,
        ),
        _unit("gamma_int", 0.99, "Discount of the non-episodic intrinsic return.", agents=_PIXEL),
        Key(
            "int_coef",
            1.0,
            "Weight of the intrinsic advantage; 0 disables RND.",
            low=0.0,
            agents=_PIXEL,
        ),
        Key(
            "int_coef_schedule",
            "constant",
            "linear decays int_coef toward zero over the run, as learning_rate_schedule does.",
            choices=("constant", "linear"),
            agents=_PIXEL,
        ),
        Key(
            "int_reward_scale",
            "auto",
            "How intrinsic rewards are scaled: return divides them by the running std of their "
            "discounted return (RND's); reward by the running std of the rewards themselves, "
            "then clips them to [-1, 1] (E3B's reference), so that a few very large bonuses do "
            "not set the scale of all the others; auto is reward for bonus e3b, else return.",
            choices=("auto", "return", "reward"),
            agents=_PIXEL,
        ),
        Key("ext_coef", 2.0, "Weight of the extrinsic advantage.", low=0.0, agents=_PIXEL),
        _positive("rnd_feature_size", 512, "Output size of RND's networks.", agents=_PIXEL),
        Key(
            "rnd_network",
            "auto",
            "RND's torso: conv (frames), mlp (the flattened observation), auto (by shape).",
            choices=("auto", "conv", "mlp"),
            agents=_PIXEL,
        ),
        _positive("rnd_hidden", 512, "Hidden width of RND's MLP torso.", agents=_PIXEL),
        Key(
            "rnd_predictor_proportion",
            0.25,
            "Share of each minibatch the predictor trains on.",
            low=0.0,
            high=1.0,
            open_low=True,
            agents=_PIXEL,
        ),
        Key(
            "bonus",
            "rnd",
            "The intrinsic reward: rnd (RND's error on the next observation), noveld "
            "(NovelD: the growth of that error from one observation to the next, on first "
            "visits within the episode), count (1/sqrt of the next observation's visits so "
            "far in its episode; no RND), or e3b (E3B's elliptical episodic bonus of learned "
            "embeddings; discrete actions; no RND).",
            choices=("rnd", "noveld", "count", "e3b"),
            agents=_PIXEL,
        ),
        Key(
            "noveld_alpha",
            0.5,
            "NovelD's weight of the current observation's error (bonus: noveld).",
            low=0.0,
            agents=_PIXEL,
        ),
        Key(
            "visit_key",
            "observation",
            "What the episodic visits (bonus: noveld, count) count: observation (a hash of "
            "the observation the bonus reads) or agent (a native grid env's agent: its cell, "
            "direction and carried object, so that views changed by a moved object are not "
            "new; one process).",
            choices=("observation", "agent"),
            agents=_PIXEL,
        ),
        _positive(
            "episodic_buckets",
            16384,
            "Hash buckets per env for the visits within an episode (bonus: noveld, count).",
            agents=_PIXEL,
        ),
        _positive(
            "e3b_embedding_size",
            256,
            "Size of E3B's learned embedding (bonus: e3b); the inverse each env keeps is its "
            "square. E3B's reference embeds in 1,024; at 32, E3B never solved KeyCorridorS4R3.",
            agents=_PIXEL,
        ),
        Key(
            "e3b_ridge",
            0.1,
            "E3B's ridge: the diagonal of an episode's covariance at its start, the paper's "
            "lambda (bonus: e3b).",
            low=0.0,
            open_low=True,
            agents=_PIXEL,
        ),
        Key(
            "rnd_init_steps",
            0,
            "Random-agent steps that start RND's observation statistics.",
            low=0,
            agents=_PIXEL,
        ),
    ),
}

# Keys that shape the trained variables or give them their meaning (what the network reads,
# how observations and rewards are scaled, the optimizer's slots): a run resumes only with the
# values it was trained with.
FIXED_ON_RESUME = (
    "env",
    "env_wrapper",
    "num_agents",
    "mpi_batch",
    "agent",
    "network",
    "policy_layers",
    "value_layers",
    "activation",
    "sde_sample_freq",
    "recurrent_units",
    "optimizer",
    "normalize_observ",
    "normalize_reward",
    "policy_size",
    "hidsize",
    "memsize",
    "extrahid",
    "conv_stack",
    "rnd_feature_size",
    "rnd_network",
    "rnd_hidden",
    "layout_bank",
)

KEYS: dict[str, Key] = {key.name: key for keys in GROUPS.values() for key in keys}

# Keys no longer read, with what replaced them: a config.yaml that holds one still loads.
RETIRED: dict[str, str] = {
    "eval_steps": "evaluation plays whole episodes: set eval_episodes",
}
GROUP_OF: dict[str, str] = {key.name: group for group, keys in GROUPS.items() for key in keys}


def defaults() -> dict[str, Any]:
    """The `default` config: every key with its default (lists copied)."""
    return {name: list(k.default) if k.item else k.default for name, k in KEYS.items()}


def keys_of(agent: str) -> list[str]:
    """The keys that `agent` reads, in schema order."""
    return [name for name, key in KEYS.items() if agent in key.agents]


def type_of(key: Key) -> type:
    """The type of a key's values (besides None for optional keys)."""
    return key.type or (list if key.item else type(key.default))

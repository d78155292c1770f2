"""The bullets of README's "The numbers" that benchmarks' records make, between two markers.

`python -m benchmarks.pages` rewrites them with the results pages.
"""

from __future__ import annotations

import os
import statistics
import textwrap

from benchmarks import common
from benchmarks.pages import (
    claims,
    exploration_orderings,
    exploration_page,
    exploration_runs,
    learning_page,
    mujoco_page,
    native_page,
    rnd_page,
    speed_matrix_page,
    speed_page,
    trees,
)

BEGIN = "<!-- numbers generated from benchmarks/results by python -m benchmarks.pages -->"
END = "<!-- end of generated numbers -->"


def read(name: str) -> list[dict]:
    """The records of `benchmarks/results/<name>.jsonl`."""
    return common.read_records(os.path.join(common.RESULTS, f"{name}.jsonl"))


class NoRecordsError(LookupError):
    """A bullet's benchmark has no records to make it from."""

    def __init__(self, records: str, title: str):
        super().__init__(records)
        self.records, self.title = records, title


def _need(rows, records: str, title: str):
    """`rows`, or NoRecordsError when there are none."""
    if not rows:
        raise NoRecordsError(records, title)
    return rows


def where(*records: dict, age_of: trees.AgeOf | None = None) -> str:
    """The day (or days) the records were made, their machines (each, oldest first), and
    whether they ran on an older `agents/` tree than HEAD's (`age_of`: `trees.git_age`)."""
    days = sorted(record["date"][:10] for record in records)
    span = days[0] if days[0] == days[-1] else f"{days[0]} to {days[-1]}"
    older = trees.readme_words(records, age_of or trees.git_age)
    return f"{span}, {' and '.join(machines(*records))}{older}"


def machines(*records: dict) -> list[str]:
    """The machines the records were made on, without their core counts, oldest first."""
    ordered = sorted(records, key=lambda record: record["date"])
    return list(dict.fromkeys(record["machine"].split(",")[0] for record in ordered))


def mujoco() -> str:
    results = _need(mujoco_page.newest(read("mujoco")), "mujoco", "MuJoCo")
    seeds = max(len(by_seed) for by_seed in results.values())
    parts, judged, missed = [], 0, []
    for task, by_seed in results.items():
        runs = list(by_seed.values())
        mean = statistics.fmean(run["eval_mean"] for run in runs)
        name = mujoco_page.REFERENCES[task].env.removesuffix("-v5")
        budget = f"{max(run['env_steps'] for run in runs) / 1e6:.2f}M"
        if len(runs) < seeds:
            budget += f", {len(runs)} seed{'s' if len(runs) > 1 else ''}"
        parts.append(f"{name} {mean:,.{mujoco_page.digits(task)}f} ({budget})")
        checks = mujoco_page.checks(task, mujoco_page.summarize(runs))
        judged += bool(checks)
        if not all(ok for ok, _ in checks):
            missed.append(name)
    every = [run for by_seed in results.values() for run in by_seed.values()]
    short = f"; {', '.join(missed)} {'does' if len(missed) == 1 else 'do'} not" if missed else ""
    return (
        f"- **MuJoCo** ({where(*every)}), mean deterministic eval over {seeds} seeds at the "
        f"configs' budgets (env steps): {', '.join(parts)}; {judged - len(missed)} of {judged} "
        "tasks reach the published PPO score (TF-Agents', RL-Zoo's for Ant) with no seed below "
        f"half of it{short} ([MuJoCo](docs/results/mujoco.md))."
    )


def speed() -> str:
    rows = _need(common.sitting(read("vs_sb3")), "vs_sb3", "Speed")
    walls = speed_page.walls(rows)
    names = learning_page.TITLES
    parts = [
        f"{names.get(task, task)} {wall['sb3'] / wall['warm']:.2f}x warm, "
        f"{wall['sb3'] / wall['cold']:.2f}x cold (SB3 on {speed_page.threads(wall['threads'])})"
        for task, wall in walls.items()
    ]
    return (
        f"- **Speed** ({where(*rows)}): {rows[0]['budget'] // 1000}k env steps from command to "
        "exit against Stable-Baselines3 with RL-Zoo's settings (SB3 on the faster of 1 and 2 "
        "torch threads; ours on both cores, warm: a config's second run, its XLA programs "
        "cached; cold: its first), SB3's median wall time over ours, "
        f"{speed_page.rounds(rows)} rounds: {'; '.join(parts)} ([speed](docs/results/speed.md))."
    )


def learning() -> str:
    records = read("learning")
    parts, misses = [], []
    for task, title in learning_page.TITLES.items():
        runs = learning_page.newest(records, task)
        if runs:
            evals = [run["eval_mean"] for run in runs]
            target = learning_page.TARGETS[task].median_eval
            middle = claims.median(evals)
            parts.append(
                f"{title} median {middle:.1f}{claims.margin(middle, target)}, worst "
                f"{min(evals):.1f} over "
                f"{len(runs)} seeds at {max(r['env_steps'] for r in runs):,} env steps "
                f"({where(*runs)})"
            )
            misses += [text for passed, text in runs[0]["checks"] if not passed]
    _need(parts, "learning", "Learning")
    missed = f" Missed targets: {'; '.join(misses)}." if misses else ""
    return (
        f"- **Learning**: {'; '.join(parts)}, the deterministic policy over 20 episodes "
        f"([learning curves](docs/results/learning.md)).{missed}"
    )


def throughput() -> str:
    """Pendulum's rate in whole training runs (the learning benchmark's seeds): the median of the
    training calls' and of end to end; the speed matrix's short, steady figure is on its page."""
    runs = _need(learning_page.newest(read("learning"), "pendulum"), "learning", "Throughput")
    calls = claims.median(r["call_steps_per_second"] for r in runs)
    whole = claims.median(r["steps_per_second"] for r in runs)
    return (
        f"- **Throughput** ({where(*runs)}): Pendulum-v1 trains at a median of {calls:,.0f} "
        f"env steps/s in its training calls (rollout and update) and {whole:,.0f} end to end "
        f"(evaluation included; {claims.compiling(runs)}) over the {len(runs)} runs of the "
        "learning benchmark; every agent family's training calls on the [speed "
        "matrix](docs/results/speed_matrix.md)."
    )


def native_minigrid() -> str:
    rows = common.sitting(read("minigrid_native"))
    doorkey = _need(
        [r for r in rows if r["env_id"] == "MiniGrid-DoorKey-8x8-v0"],
        "minigrid_native",
        "Native MiniGrid",
    )[0]
    python = [r["minigrid_python_steps_per_second"] for r in rows]
    shown = speed_matrix_page.whole_sitting(read("speed_matrix"))[0]  # The page's table.
    matrix = {r["family"]: r for r in shown if not r["against"]}
    rnd, pixels = matrix.get("minigrid_native_rnd"), matrix.get("minigrid_native_pixels")
    text = (
        f"- **Native MiniGrid** ({where(doorkey)}): minigrid's envs as TensorFlow ops, "
        f"{doorkey['envs']:,} DoorKey-8x8 envs at {doorkey['steps_per_second'] / 1e6:.2f}M env "
        f"steps/s under random actions, where minigrid's own step runs "
        f"{min(python) / 1e3:.1f}-{max(python) / 1e3:.1f}k per env in Python "
        "([throughput](docs/results/minigrid_native.md))."
    )
    if rnd is not None:
        text += (
            f" RND on the symbolic view trains at {rnd['steps_per_second'] / 1e3:.0f}k env "
            f"steps/s in its training calls ({sample(rnd)}, {where(rnd)}; one XLA program, [speed "
            "matrix](docs/results/speed_matrix.md))."
        )
    if pixels is not None:
        text += (
            f" The CNN+GRU pixel agent with RND on its 56x56 frames: "
            f"{pixels['steps_per_second']:,.0f} env steps/s ({sample(pixels)}, {where(pixels)})."
        )
    return text


def sample(record: dict) -> str:
    """What one speed-matrix figure is: "one sample of 6 calls in 4 s"."""
    calls = record["calls"]
    return f"one sample of {calls} call{'s' if calls != 1 else ''} in {record['seconds']:g} s"


def rnd() -> str:
    results = rnd_page.sitting_results(read("rnd"))
    _need(results.get("RND"), "rnd", "Exploration from pixels")
    counts = {
        agent: sum(run["train_success"] >= rnd_page.REACH_SUCCESS for run in by_seed.values())
        for agent, by_seed in results.items()
    }
    first = next(iter(results["RND"].values()))
    seeds = len(results["RND"])
    every = [run for by_seed in results.values() for run in by_seed.values()]
    return (
        f"- **Exploration from pixels** ({where(*every)}): the pixel agent with RND reaches "
        f"MiniGrid-Empty-16x16's goal in {counts['RND']} of {seeds} seeds, its control in "
        f"{counts['control']} of {len(results['control'])}, at {first['env_steps']:,} env steps "
        "([RND](docs/results/rnd.md))."
    )


def exploration() -> str:
    runs = _need(
        exploration_runs.named(read("exploration")), "exploration", "Exploration on native MiniGrid"
    )
    tasks, totals = [], set()
    several_machines = len(machines(*runs)) > 1  # Then each task says its own.
    for task in dict.fromkeys(r["task"] for r in runs):
        first = next(r for r in runs if r["task"] == task)
        env_id = first["env_id"].removeprefix("MiniGrid-").removesuffix("-v0")
        counts = []
        for arm, name in exploration_runs.ARM_NAMES.items():
            mode, total = exploration_runs.solved(runs, task, arm, policy="mode")
            sampled, _ = exploration_runs.solved(runs, task, arm, policy="sampled")
            if total:
                arm_runs = [r for r in runs if r["task"] == task and r["arm"] == arm]
                seeded = exploration_runs.seeds(arm_runs)
                of = f"{total}" if seeded == total else f"{total} runs of {seeded} seeds"
                counts.append(f"{name} {mode} [{sampled}] of {of}")
                totals.add(total)
        policy = exploration_page.policy(first)
        ran = [r for r in runs if r["task"] == task]
        on = f" on {' and '.join(machines(*ran))}" if several_machines else ""
        tasks.append(
            f"{env_id} ({policy}) at {first['train_steps'] / 1e6:.1f}M env steps{on}, "
            f"extrinsic discount {first['discount']}: {', '.join(counts)}{_ordered(runs, task)}"
        )
    return (
        f"- **Exploration on native MiniGrid** ({where(*runs)}): runs whose deterministic "
        "policy (the mode, which runs evaluate by default) succeeds in at least 90% of "
        "minigrid's own episodes, [the sampled policy's count in brackets], RND against its "
        "control (the same agent without the bonus) and, where run, NovelD, the episodic "
        "count bonus and E3B (the same agent with an episodic bonus), counting "
        f"{exploration_runs.COUNTED} (a seed run twice counts twice); {_seeds(totals)}: "
        f"{'; '.join(tasks)} ([exploration](docs/results/exploration.md))."
    )


def _ordered(runs: list[dict], task: str) -> str:
    """The orderings of `task`'s arms that hold over every run counted, each naming the policy
    it scores (`exploration_orderings`), in brackets."""
    return f" ({exploration_orderings.ordering_words(runs, task)})"


def _seeds(totals: set[int]) -> str:
    """How many runs each arm counts: "3 runs each", or "2 to 5 runs an arm"."""
    low, high = min(totals), max(totals)
    return f"{high} runs each" if low == high else f"{low} to {high} runs an arm"


def native() -> str:
    records = read("native")
    runs = native_page.newest(records, "native")
    by_config: dict[str, list[dict]] = {}
    for run in runs:
        by_config.setdefault(run["config"], []).append(run)

    def seconds(config: str) -> str:
        times = sorted(run["seconds"] for run in by_config[config])
        return f"{times[0]:.1f}-{times[-1]:.1f} s" if len(times) > 1 else f"{times[0]:.1f} s"

    def median(config: str) -> str:
        return f"{claims.median(run['mean'] for run in by_config[config]):.1f}"

    cartpole = _need(by_config.get("cartpole_native"), "native", "Native environments")
    solved = sum(run["mean"] >= 475 for run in cartpole)
    others = [
        f"{by_config[config][0]['env'].removesuffix('-v0').removesuffix('-v1')} {median(config)}"
        for config in ("acrobot_native", "mountaincar_native", "mountaincar_continuous_native")
        if config in by_config
    ]
    text = (
        f"- **Native environments** ({where(*runs)}): gymnasium's classic control as TensorFlow "
        f"ops, each run a whole process from command to exit (the first of each config compiling): "
        f"CartPole-v1 {cartpole[0]['env_steps']:,} env steps in {seconds('cartpole_native')}, "
        f"500 on gymnasium's CartPole in {solved} of {len(cartpole)} seeds; Pendulum-v1 "
        f"{by_config['pendulum_native'][0]['env_steps']:,} in {seconds('pendulum_native')}, median "
        f"{median('pendulum_native')}; medians {', '.join(others)} on gymnasium's envs"
    )
    whole_calls = [
        r
        for r in native_page.newest(records, "steady")
        if r["what"].startswith("whole call") and r["config"] == "cartpole_native"
    ]
    if whole_calls:  # The shape the config trains with: rollouts of rollouts_per_call.
        call = max(whole_calls, key=lambda r: len(r["shape"].split(" x ")))
        text += (
            f"; cartpole_native's whole training call ({call['shape']} env steps, rollouts "
            f"and updates) at {call['steps_per_second']:,.0f} env steps/s, "
            f"{native_page.best_of(call)}"
        )
    return text + " ([native environments](docs/results/native.md))."


def scaling() -> str:
    rows = common.sitting(read("mpi_scaling"))
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["mpi_batch"], []).append(row)
    _need(groups.get("one process"), "mpi_scaling", "Scaling")
    base = claims.median(r["steps_per_second"] for r in groups["one process"])

    def figures(mode: str) -> str:
        speed = claims.median(r["steps_per_second"] for r in groups[mode]) / base
        score = statistics.fmean(r["eval_mean"] for r in groups[mode])
        return f"{speed:.2f}x, return {score:.0f}"

    modes = [m for m in ("per_rank", "global") if m in groups]
    return (
        f"- **Scaling** ({where(*rows)}): `mpirun -n 2` on an env-bound Pendulum, env steps/s "
        f"and return at equal env steps over {len(groups['one process'])} seeds against one "
        f"process's (return {statistics.fmean(r['eval_mean'] for r in groups['one process']):.0f})"
        f": {'; '.join(f'mpi_batch={m} {figures(m)}' for m in modes)} "
        "([MPI scaling](docs/results/mpi_scaling.md))."
    )


def memory() -> str:
    records = _need(read("api_memory"), "api_memory", "Memory")
    newest = records[-1]["commit"]
    rows = [r for r in records if r["commit"] == newest]

    def growth(kept: bool) -> str:
        found = [r["rss_mb"][-1] - r["rss_mb"][0] for r in rows if (r["kept_agents"] > 0) == kept]
        return f"{min(found):+.0f} to {max(found):+.0f} MB"

    calls = len(rows[0]["rss_mb"])
    seeds = ", each of its own seed," if rows[0].get("seeds") else ""
    steps = f" at its own budget of {rows[0]['train_steps']:,} env steps" if seeds else ""
    return (
        f'- **Memory** ({where(*rows)}): {calls} `agents.train("debug")` calls{seeds} in one '
        f"process{steps} grow it by {growth(True)} after the first (agents of ended runs "
        f"reused), {growth(False)} without ([memory](docs/results/api_memory.md))."
    )


def block() -> str:
    """The generated bullets, markers included, wrapped as the README's text is; a benchmark
    without records says so in its bullet's place."""
    bullets = []
    for make in (
        mujoco,
        speed,
        learning,
        throughput,
        native,
        native_minigrid,
        rnd,
        exploration,
        scaling,
        memory,
    ):
        try:
            bullets.append(make())
        except NoRecordsError as missing:
            bullets.append(
                f"- **{missing.title}**: not measured (no records in "
                f"`benchmarks/results/{missing.records}.jsonl`)."
            )
    wrapped = [
        textwrap.fill(bullet, 100, subsequent_indent="  ", break_on_hyphens=False)
        for bullet in bullets
    ]
    return "\n".join([BEGIN, *wrapped, END])

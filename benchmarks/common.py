"""What the benchmarks share: the machine and commit, records, child processes, a table, and the
runs that several benchmarks train, time or score."""

from __future__ import annotations

import functools
import inspect
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import typing
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")  # The records files.
DEFAULT_OUT = os.path.join(ROOT, "benchmarks", "out")  # Reports and run directories.
EVAL_EPISODES = 20
# (header, format) of the measurements of a run `train_and_evaluate` returns.
RUN_COLUMNS = (
    ("env steps", "{env_steps:,}"),
    (f"eval ({EVAL_EPISODES} ep.)", "{eval_mean:.1f} ± {eval_std:.1f}"),
    ("wall s", "{seconds:.1f}"),
    ("env steps/s", "{steps_per_second:,.0f}"),
    ("train call steps/s", "{call_steps_per_second:,.0f}"),
    ("peak RSS MB", "{rss_mb:.0f}"),
)


def cores() -> int:
    """The CPUs this process may run on: its affinity (`taskset`, a scheduler's binding), not
    every CPU of the host, which `os.cpu_count()` counts."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_line(seconds: float | None = None) -> str:
    """Date, CPUs, load and Python of this machine (and the benchmark's total time), one line."""
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    cpu = _cpu_model()
    line = (
        f"{time.strftime('%Y-%m-%d %H:%M')} | {cores()} CPUs{f' ({cpu})' if cpu else ''}, "
        f"load {load} | Python {platform.python_version()}"
    )
    return line if seconds is None else f"{line} | {seconds:.0f} s in all"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine(cpuinfo: str = "/proc/cpuinfo") -> str:
    """The CPU model and core count, which records of the same machine share.

    A virtual machine may name its CPU only by brand ("AMD EPYC"); CPUs that differ by half in
    speed then share that name, so it gets the CPU's family and model from /proc/cpuinfo.
    """
    model = platform.processor() or platform.machine()
    fields = {}
    try:
        with open(cpuinfo, encoding="utf-8") as file:
            for line in file:
                key, _, value = line.partition(":")
                if not key.strip():
                    break  # The first processor's block ends here.
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    model = fields.get("model name", model)
    if not any(c.isdigit() for c in model) and "cpu family" in fields and "model" in fields:
        model += f" (family {fields['cpu family']} model {fields['model']})"
    return f"{model}, {cores()} cores"


def commit(checkout: str = ROOT) -> str:
    """The checkout's commit, `-dirty` when its code differs from it (results and docs aside:
    a benchmark's own records and pages change as it runs)."""
    own = os.path.realpath(checkout) == os.path.realpath(ROOT)
    if (own and os.environ.get("BENCHMARK_COMMIT")) or not os.path.exists(
        os.path.join(checkout, ".git")
    ):
        # A copy whose history is missing or not its own (an exported tree, a copy sent to another
        # machine) can only be told its commit: the copying side sets BENCHMARK_COMMIT, which
        # names this checkout's commit, never that of a checkout measured `--against` it.
        return os.environ.get("BENCHMARK_COMMIT", "unknown") if own else "unknown"
    result = subprocess.run(
        ["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    revision = result.stdout.strip() or "unknown"
    code = ["agents", "benchmarks/*.py", "setup.py", "pyproject.toml"]
    changed = subprocess.run(["git", "-C", checkout, "diff", "--quiet", "HEAD", "--", *code])
    return revision + ("-dirty" if changed.returncode == 1 else "")


@functools.cache
def agents_tree(revision: str) -> str | None:
    """The git tree of `agents/` at `revision` (equal trees: identical library code), or None
    where this checkout does not know the revision."""
    result = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}:agents"],
        capture_output=True,
        text=True,
    )
    return result.stdout.strip() or None


def new_sitting() -> dict:
    """What every record of one run of a benchmark shares: when it started, this checkout's
    commit, the machine, and how many compiled programs XLA's cache held then (0: a cold start,
    as on a fresh machine)."""
    return dict(
        started=time.strftime("%Y-%m-%d %H:%M:%S"),
        commit=commit(),
        machine=machine(),
        compile_cache_entries=cached_programs(),
    )


def cached_programs() -> int:
    """How many compiled programs XLA's compile cache (this user's default) holds now."""
    from agents.runtime import compile_cache  # Plain Python: no TensorFlow.

    return len(compile_cache.entries(compile_cache.cache_directory()))


def append_record(path: str, sitting: dict, **figures) -> None:
    """Appends one record to the JSON-lines file `path`: the sitting's keys, the date and load
    now, and `figures`."""
    record = dict(sitting, date=time.strftime("%Y-%m-%d %H:%M"), load=os.getloadavg()[0])
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(dict(record, **figures)) + "\n")


def read_records(path: str) -> list[dict]:
    """The records of the JSON-lines file `path`, in order; none when it does not exist."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file if line.strip()]


def sitting(records: list[dict]) -> list[dict]:
    """The records of the newest sitting (one run of a benchmark: same `started`), in order:
    the sitting that started last, wherever the file holds it (records copied in from another
    checkout can follow newer ones); records without `started` (kept from before benchmarks
    wrote it) belong to none."""
    dated = [record for record in records if "started" in record]
    if not dated:
        return []
    started = max(record["started"] for record in dated)
    return [record for record in dated if record["started"] == started]


def table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown table, aligned for the terminal too."""
    rows = [header, *rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = ["| " + " | ".join(c.rjust(w) for c, w in zip(row, widths)) + " |" for row in rows]
    lines.insert(1, "| " + " | ".join("-" * (w - 1) + ":" for w in widths) + " |")
    return "\n".join(lines)


def timed_process(
    command: list[str], log_path: str, cwd: str | None = None, env: dict | None = None
) -> tuple[str, float]:
    """Runs `command` (in `cwd`, with the environment `env`, default this process's); returns
    (its stdout, wall seconds from spawn to exit).

    Its stderr goes to `log_path`.

    Raises:
        RuntimeError: The command failed; the message holds the tail of its log.
    """
    with open(log_path, "w") as log:
        start = time.perf_counter()
        result = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=cwd, env=env
        )
        seconds = time.perf_counter() - start
    if result.returncode:
        with open(log_path) as log:
            tail = "".join(log.readlines()[-20:])
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}:\n{tail}")
    return result.stdout, seconds


def last_json(stdout: str) -> dict:
    """The JSON object on the last line of a child's stdout."""
    return json.loads(stdout.strip().splitlines()[-1])


def run_script(main: Callable[[], int | None], child: Callable[..., dict]) -> None:
    """The entry point of a benchmark that measures in fresh child processes.

    `python -m benchmarks.<name> --child ARG ...` calls `child` with the ARGs converted to the
    types its parameters are annotated with, and prints its result as JSON on the last line
    (rank 0's only, under mpirun); without `--child` the process exits with `main()`.
    """
    if sys.argv[1:2] != ["--child"]:
        sys.exit(main())
    hints = typing.get_type_hints(child)
    names = list(inspect.signature(child).parameters)
    values = [hints.get(name, str)(value) for name, value in zip(names, sys.argv[2:])]
    result = child(*values)
    if os.environ.get("PMI_RANK", "0") == "0":
        print(json.dumps(result), flush=True)


def checkout_env(
    checkout: str = ROOT, without: tuple[str, ...] = (), **changes: str
) -> dict[str, str]:
    """This process's environment with `checkout` first on PYTHONPATH (and `changes`; the
    variables named in `without` removed), so that a child started as `python -m
    benchmarks.<name>` imports that checkout's `benchmarks` and `agents` (`python -m` puts the
    working directory before it: run it in `checkout` where another checkout's could be found
    there)."""
    path = os.pathsep.join([checkout, os.environ.get("PYTHONPATH", "")])
    kept = {key: value for key, value in os.environ.items() if key not in without}
    return dict(kept, PYTHONPATH=path, **changes)


def training_curve(run_dir: str, figure: str = "score") -> list[list[float]]:
    """[env steps, figure] of each training report of a run that has it (its metrics.jsonl):
    `score`, the mean training return; `success_rate`, where the config sets a success score."""
    points = []
    with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as file:
        for line in file:
            row = json.loads(line)
            if row.get("phase") == "train" and row.get(figure) is not None:
                points.append([row["env_steps"], row[figure]])
    return points


def run_child(module: str, args: list[str], run_dir: str) -> dict:
    """Runs `python -m module --child *args run_dir` in a fresh process; returns its last JSON
    line. Its stderr goes to `<run_dir>.log`.

    Raises:
        RuntimeError: The child failed; the message holds the tail of its log.
    """
    shutil.rmtree(run_dir, ignore_errors=True)  # A Run would resume an old checkpoint.
    command = [sys.executable, "-m", module, "--child", *args, run_dir]
    with open(run_dir + ".log", "w") as log:
        result = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=log, text=True, env=checkout_env()
        )
    if result.returncode:
        with open(run_dir + ".log") as log:
            tail = "".join(log.readlines()[-20:])
        raise RuntimeError(f"{' '.join(args)} exited with {result.returncode}:\n{tail}")
    return last_json(result.stdout)


def child_result(command: list[str], label: str, timeout: float, checkout: str) -> dict | None:
    """The JSON result of a child process that measures, run in `checkout` on its `agents`
    package and with XLA's persistent cache off (every start compiles, as a first run does);
    None (with a line on stderr naming `label`) when it fails or takes longer than `timeout`
    seconds."""
    env = checkout_env(checkout, AGENTS_XLA_CACHE="0")
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, env=env, cwd=checkout, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        print(f"{label}: skipped, longer than {timeout:g} s", file=sys.stderr)
        return None
    if result.returncode:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"{label}: skipped, exit {result.returncode}: {last}", file=sys.stderr)
        return None
    return last_json(result.stdout)


def time_calls(name: str, overrides: dict, seconds: float) -> dict:
    """Times steady training calls of named config `name` with `overrides` in this process for
    about `seconds` (at least two calls): env steps/s, the first call's seconds, the calls."""
    spawned = time.perf_counter()
    from agents.ppo import compilation
    from agents.runtime import tf_loading
    from agents.scripts import configs

    config = dict(getattr(configs, name)(), **overrides)
    tf_loading.import_tensorflow(onednn=compilation.onednn(config["agent"]))  # As train does.
    from agents.tools import mpi
    from agents.training.run import Run

    world = mpi.init_world()
    run_dir = world.bcast(tempfile.mkdtemp(prefix="speed_matrix_") if world.is_root else None)
    run = Run(config, run_dir, seed=0, world=world)
    try:
        start = time.perf_counter()
        run.train_call()
        first_end = time.perf_counter()
        first = first_end - start
        times = []
        # Every rank makes the same number of calls (rank 0's count), or MPI ranks would hang.
        while world.bcast(len(times) < 2 or sum(times) < seconds):
            start = time.perf_counter()
            run.train_call()
            times.append(time.perf_counter() - start)
    finally:
        run.close()
    rollouts = config.get("rollouts_per_call", 1)
    steps = config["rollout_length"] * rollouts * config["num_agents"] * world.size
    return dict(
        steps_per_second=steps / statistics.median(times),
        first_call_s=first,
        to_first_call_s=first_end - spawned,  # From the child's first line (imports included).
        calls=len(times),
    )


def train_and_evaluate(config: dict, budget: int, seed: int, run_dir: str) -> dict[str, float]:
    """Train `config` to the last whole rollout within `budget` env steps, then evaluate it
    (the measurements of `RUN_COLUMNS`)."""
    from agents.runtime import tf_loading

    tf_loading.import_tensorflow()  # As train does: its TF settings (oneDNN off, XLA's cache).
    from agents.training.loop import phases
    from agents.training.run import Run
    from agents.training.tensorboard_log import TensorBoardLog

    train_call = config["rollout_length"] * config["num_agents"]
    run = Run(config, run_dir, seed)
    log = TensorBoardLog(run_dir)  # The curves, as a Trainer's run writes them.
    try:
        start = time.perf_counter()
        reports = []
        for report in phases(run, should_stop=lambda: run.env_steps + train_call > budget):
            log.write(report, run.env_steps)
            reports.append(report)
        seconds = time.perf_counter() - start
        scores = run.evaluate(EVAL_EPISODES)
    finally:
        log.close()
        run.close()
    return dict(
        env_steps=run.env_steps,
        eval_mean=statistics.fmean(scores),
        eval_std=statistics.pstdev(scores),
        seconds=seconds,
        steps_per_second=run.env_steps / seconds,
        # The last training call of each train phase: rollout and update, after tracing.
        call_steps_per_second=statistics.median(
            [r.metrics["env_steps_per_second"] for r in reports if r.phase == "train"] or [0.0]
        ),
        rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,  # KiB on Linux.
    )


def eval_curve(run_dir: str, run: dict) -> list[list[float]]:
    """[env steps, eval mean score] of each eval phase of a run `train_and_evaluate` trained,
    then its final evaluation."""
    from agents.training import curves as plot

    # A run stopped before its first eval phase has no eval summaries, only the final score.
    steps, scores = (
        plot.read_curve(run_dir, "eval") if plot.has_events(run_dir, "eval") else ((), ())
    )
    return [[float(x), float(y)] for x, y in zip(steps, scores)] + [
        [float(run["env_steps"]), float(run["eval_mean"])]
    ]


def score_on_minigrid(run_dir: str, env_id: str, episodes: int, seed: int = 10**9) -> dict:
    """Success rate and mean return of the run's policy on minigrid's own env, sampled as
    trained and by its mode (episodes reset with seeds `seed` + k: layouts not in the bank,
    whose layouts are minigrid's seeds below `layout_bank`), all episodes at once. `seed` also
    seeds the sampled actions, so that a policy scored again scores the same."""
    import agents
    from agents.envs.python.environments import make_env

    policy = agents.load_policy(run_dir, seed=seed)
    result = {}
    for name, deterministic in (("stochastic", False), ("mode", True)):
        evaluation = agents.evaluate(
            policy,
            lambda: make_env(env_id, wrapper="minigrid_image"),
            episodes,
            seed=seed,
            deterministic=deterministic,
            parallel=episodes,
            success_score=0.0,  # minigrid rewards only reaching the goal, with 1 - 0.9 t / T > 0.
        )
        result[f"success_{name}"] = evaluation.success_rate
        result[f"return_{name}"] = evaluation.mean
    return result


def native_random_steps(env_id: str, envs: int, steps: int, repeats: int, seed: int = 0) -> dict:
    """`envs` native envs of `env_id` under uniformly random actions, `steps` batch steps a
    compiled call (finished episodes restarted inside it): the median env steps/s of `repeats`
    calls after the first, and that first (compiling) call's seconds."""
    from agents.runtime import tf_loading

    tf_loading.import_tensorflow(onednn=False)  # Quiet, with the settings training uses.
    import tensorflow as tf

    from agents.envs import NativeBatchEnv, make_native

    batch = NativeBatchEnv(make_native(env_id), envs, seed=seed)
    batch.reset()

    @tf.function(jit_compile=True)
    def call(key):
        def body(step):
            action = tf.random.stateless_uniform([envs], tf.stack([key, step]), 0, 7, tf.int32)
            batch.simulate(action)
            batch.reset_where(batch.terminated | batch.truncated)
            return (step + 1,)

        tf.while_loop(lambda step: step < steps, body, (tf.constant(0),))
        return tf.reduce_sum(batch.length)

    start = time.perf_counter()
    call(tf.constant(0)).numpy()
    compile_seconds = time.perf_counter() - start
    rates = []
    for repeat in range(repeats):
        start = time.perf_counter()
        call(tf.constant(repeat + 1)).numpy()
        rates.append(envs * steps / (time.perf_counter() - start))
    return {
        "steps_per_second": statistics.median(rates),
        "compile_seconds": compile_seconds,
        "tensorflow": tf.__version__,
    }

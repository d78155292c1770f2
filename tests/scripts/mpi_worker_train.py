"""MPI worker for tests/scripts/test_mpi_train.py: data-parallel training on two ranks.

`mpirun -n 2 python tests/scripts/mpi_worker_train.py check <logdir>` trains a debug Run and
checks that parameters stay identical, that gradients are the mean of the ranks' gradients and that
normalizer statistics merge; then it runs the training script in-process (`train.main`), checks
the run directory, resumes it, and prints `OK <check>` lines. A failed check aborts the job.

`... mpi_worker_train.py fail <logdir>` makes rank 1 raise in its second training call;
`... kill <logdir>` kills it with SIGKILL, and `... exit <logdir>` ends it with `os._exit(3)`, in
its fifth call, after the checkpoints of env steps 128 and 256.
"""

import contextlib
import glob
import io
import os
import signal
import sys

import numpy as np
import tensorflow as tf

from agents.ppo.algorithm import average_over_ranks
from agents.scripts import configs, train
from agents.tools import collectives, mpi
from agents.tools.normalize import StreamingNormalize
from agents.training.loop import phases
from agents.training.run import Run


def check(world, passed, name, detail=""):
    """Print `OK <name>` (rank 0), or end the job so that no rank waits in a collective."""
    if not passed:
        print(f"FAIL rank={world.rank} {name}: {detail}", flush=True)
        world.comm.Abort(1)
    if world.is_root:
        print(f"OK {name}", flush=True)


def all_equal(world, arrays):
    """Whether every rank holds exactly (bitwise) rank 0's arrays."""
    mine = np.concatenate([np.ravel(np.asarray(a, np.float64)) for a in arrays])
    return all(np.array_equal(mine, other) for other in world.allgather(mine))


def check_session(world, logdir):
    config = configs.debug()
    # Stop every update after its first epoch: the ranks must agree on it (on the mean KL).
    config.update(target_kl=1e-9)
    run_dir = world.bcast(os.path.join(logdir, "session"))
    run = Run(config, run_dir, seed=3, world=world)
    try:
        list(phases(run))
        agent = run.agent
        updates = int(agent.optimizer.iterations.numpy())
        # 256 env steps / (16 steps x 2 envs x 2 ranks) = 4 updates of 1 epoch x 2 minibatches.
        check(world, run.env_steps == 256 and updates == 8, "steps", (run.env_steps, updates))
        variables = agent.network.trainable_variables + agent.optimizer.variables
        check(world, all_equal(world, variables), "parameters identical after updates")
        stats = agent.observ_normalizer
        merged = stats.count.numpy() == 256 and all_equal(world, [stats.mean, stats.var])
        check(world, merged, "observation statistics merged", stats.count.numpy())
        check(world, not all_equal(world, [agent.rng.state]), "sampling differs per rank")
        # Each rank updated on both ranks' rollouts: advantages normalized over their union.
        advantage = agent.last_rollout(["advantage"])["advantage"]
        union = np.concatenate(world.allgather(advantage), axis=1)
        joint = abs(union.mean()) < 1e-5 and abs(union.std() - 1) < 1e-3
        check(world, joint and abs(advantage.mean()) > 1e-3, "update of both ranks' rollouts")
        check_gradients(world, agent)
    finally:
        run.close()


def check_global_batch(world, logdir):
    """`mpi_batch: global` splits num_agents over the ranks: one process's batch and updates."""
    config = dict(configs.debug(), target_kl=1e-9, mpi_batch="global")
    run = Run(config, world.bcast(os.path.join(logdir, "global")), seed=3, world=world)
    try:
        list(phases(run))
        updates = int(run.agent.optimizer.iterations.numpy())
        # 256 env steps / (16 steps x 2 envs) = 8 updates of 1 epoch x 2 minibatches, as one
        # process makes them; the 2 envs are one per rank.
        shape = (len(run.train_env), run.env_steps, updates)
        check(world, shape == (1, 256, 16), "global batch: one process's updates", shape)
    finally:
        run.close()


def check_rnd(world, logdir):
    """RND under MPI: identical networks, observation statistics of both ranks' frames."""
    config = configs.debug_rnd()
    config.update(train_steps=256, train_every=128, rnd_init_steps=8)
    run = Run(config, world.bcast(os.path.join(logdir, "rnd")), seed=5, world=world)
    try:
        reports = [report for report in phases(run) if report.phase == "train"]
        agent = run.agent
        variables = list(agent.network.trainable_variables) + list(agent.rnd.trainable_variables)
        check(world, all_equal(world, variables), "rnd parameters identical after updates")
        # Warm-up and rollout frames of both ranks: 8 x 2 x 2 + 256 (+ RunningMeanStd's epsilon).
        count = agent.rnd.observation_stats.count.numpy()
        stats = agent.rnd.observation_stats
        merged = abs(count - 288) < 1e-3 and all_equal(world, [stats.mean, stats.var])
        check(world, merged, "rnd statistics merged", count)
        cells = reports[-1].metrics["visited_cells"]
        check(world, all_equal(world, [cells]) and cells >= 2, "visited cells of all ranks", cells)
    finally:
        run.close()


def check_native(world, logdir):
    """A native env under MPI: envs seeded by rank, identical parameters after the updates."""
    config = configs.cartpole_native()
    config.update(
        num_agents=8, rollouts_per_call=1, train_steps=1024, train_every=512, eval_episodes=4
    )
    run = Run(config, world.bcast(os.path.join(logdir, "native")), seed=7, world=world)
    try:
        list(phases(run))
        agent = run.agent
        variables = agent.network.trainable_variables + agent.optimizer.variables
        check(world, run.env_steps == 1024, "native env steps", run.env_steps)
        check(world, all_equal(world, variables), "native parameters identical after updates")
        observ = run.train_env.observ.numpy()
        check(world, not all_equal(world, [observ]), "native envs differ per rank")
    finally:
        run.close()


def check_gradients(world, agent):
    """PPO's average over ranks equals the mean of per-rank gradients on per-rank data."""
    rng = np.random.default_rng(world.rank)
    observ = tf.constant(rng.normal(size=(6, 1, 3)), tf.float32)
    action = tf.constant(rng.normal(size=(6, 1, 1)), tf.float32)
    network = agent.network
    with tf.GradientTape() as tape:
        output = network(observ, tf.zeros([6, 1], tf.bool), network.initial_state(6))
        loss = tf.reduce_sum(output.value**2) - tf.reduce_sum(output.policy.log_prob(action))
    local = tape.gradient(loss, network.trainable_variables)
    averaged = average_over_ranks(local, collectives.mpi_cross_replica_sum(world.comm))
    every_rank = world.allgather([g.numpy() for g in local])
    expected = [np.mean(parts, 0) for parts in zip(*every_rank)]
    close = all(np.allclose(a.numpy(), e, rtol=1e-5, atol=1e-7) for a, e in zip(averaged, expected))
    differ = not all_equal(world, local)
    check(world, close and differ, "gradient is the mean over ranks", (close, differ))


def check_normalizer(world):
    """Merged statistics equal numpy's over the concatenated data of all ranks."""
    data = np.random.default_rng(world.rank).normal(world.rank * 3.0, 1.0 + world.rank, (5, 2))
    normalizer = StreamingNormalize(
        (2,), cross_replica_sum=collectives.mpi_cross_replica_sum(world.comm)
    )
    normalizer.update(tf.constant(data))
    everything = np.concatenate(world.allgather(data))
    passed = np.allclose(normalizer.mean.numpy(), everything.mean(0), rtol=1e-10) and np.allclose(
        normalizer.var.numpy(), everything.var(0), rtol=1e-10
    )
    check(world, passed, "normalizer statistics equal numpy's")


def run_script(argv):
    """`train.main(argv)` on this rank; returns (exit code, stdout lines)."""
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = train.main(argv)
    return code, stdout.getvalue().splitlines()


def check_script(world, logdir):
    logdir = os.path.join(logdir, "script")
    code, lines = run_script(["--config=debug", f"--logdir={logdir}"])
    runs = glob.glob(os.path.join(logdir, "*"))
    check(world, code == 0 and len(runs) == 1, "one run directory", (code, runs))
    check(world, world.is_root or not lines, "only rank 0 prints", lines)
    (run_dir,) = runs
    if world.is_root:
        events = {p: len(glob.glob(os.path.join(run_dir, p, "events*"))) for p in ("", "train")}
        ckpts = glob.glob(os.path.join(run_dir, "checkpoints", "ckpt-*.index"))
        written = os.path.isfile(os.path.join(run_dir, "config.yaml")) and ckpts
        # One event file of the summaries, one of the hparams: one TensorBoard entry.
        check(world, events == {"": 2, "train": 0} and written, "files", (events, ckpts))
        check(world, lines[-1] == f"Done: 256 env steps in {run_dir}.", "env steps", lines)
        reports = sum(line.startswith("train  env") for line in lines)
        check(world, reports == 2, "reports", lines)
    timestamp = os.path.basename(run_dir).split("-")[0]
    resume = ["--config=debug", f"--logdir={logdir}", f"--timestamp={timestamp}"]
    code, lines = run_script(resume + ["--set", "train_steps=512"])
    check(world, code == 0, "resume exit code", code)
    if world.is_root:
        expected = [
            f"Resuming run {run_dir} at env step 256.",
            f"Done: 512 env steps in {run_dir}.",
        ]
        check(world, [lines[0], lines[-1]] == expected, "resume continues", lines)


def fail(world, logdir, mode):
    """Rank 1 raises in its second training call, or dies in its fifth (killed, or exiting
    without Python's clean-up), while rank 0 trains on."""
    if world.rank == 1:
        train_step = Run.train_call_metrics
        calls = []

        def failing_step(self):
            calls.append(self.env_steps)
            if mode == "fail" and len(calls) == 2:
                raise RuntimeError("injected failure")
            if mode == "kill" and len(calls) == 5:
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "exit" and len(calls) == 5:
                os._exit(3)
            return train_step(self)

        Run.train_call_metrics = failing_step
    argv = ["--config=debug", f"--logdir={logdir}", "--set", "train_steps=1000000"]
    sys.exit(train.main(argv))


def main():
    mode, logdir = sys.argv[1:]
    world = mpi.init_world()
    collectives.share_cores(world)
    if mode in ("fail", "kill", "exit"):
        fail(world, logdir, mode)
    check_normalizer(world)
    check_session(world, logdir)
    check_global_batch(world, logdir)
    check_rnd(world, logdir)
    check_native(world, logdir)
    check_script(world, logdir)


if __name__ == "__main__":
    main()

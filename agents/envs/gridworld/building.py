"""Building a layout bank: its chunks encoded in this process, or in worker processes (one per
core, niced) for a large bank or one that grows while a run trains; a worker is this module run
as `python -m` with a folder to write its chunks into."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from agents.envs.gridworld import compact
from agents.envs.gridworld.build_progress import BuildProgress

PARALLEL_FROM = 32768  # Banks this large are built by one process per core.
RATE_SAMPLE = 512  # Layouts timed to measure the generator's rate (0.1-0.2 s of minigrid's).
RATE_BASE = 64  # Layouts whose common cells stand for a bank's base while timing.
# Workers yield to training, which draws from the layouts built so far while they build more.
WORKER_NICE = 10


def generate(env_id: str, size: int, seed: int) -> dict[str, np.ndarray]:
    """`size` layouts, minigrid's `reset(seed=seed + k)` for k in range(size), encoded.

    The build prints its progress on stdout (`BuildProgress`: a bank of 2**20 layouts takes
    minutes). An exception while it builds (a stop signal's, in the main thread) kills its
    worker processes and removes their folder.
    """
    base = compact.base_layout(env_id, min(size, compact.BASE_SAMPLE), seed)
    return compact.assemble(base, _chunks(env_id, size, seed, base, BuildProgress(env_id, size)))


def measure_rate(env_id: str, sample: int = RATE_SAMPLE) -> float:
    """Layouts per second that one process makes of `env_id` (minigrid's reset and the
    encoding, as a worker makes each), timed over `sample` layouts."""
    base = compact.base_layout(env_id, RATE_BASE, 0)  # Cells that differ from it cost as in a bank.
    started = time.perf_counter()
    compact.encode_chunk(env_id, range(RATE_BASE, RATE_BASE + sample), base)
    return sample / max(time.perf_counter() - started, 1e-9)


def _chunks(env_id: str, size: int, seed: int, base: np.ndarray, progress: BuildProgress) -> list:
    """The encoded chunks of the bank, in order: by worker processes, one per core, for large
    banks. Workers are fresh interpreters (`python -m`), not forks of a process that may hold
    TensorFlow's threads, nor spawns that would run the user's script again."""
    chunk = compact.CHUNK
    tasks = [range(seed + a, seed + min(a + chunk, size)) for a in range(0, size, chunk)]
    if size < PARALLEL_FROM:
        progress.start(1)
        chunks = []
        for seeds in tasks:  # In this process: a signal's exception stops it between layouts.
            chunks.append(compact.encode_chunk(env_id, seeds, base))
            progress.update(seeds.stop - seed)
        progress.finish()
        return chunks
    with tempfile.TemporaryDirectory(prefix="agents-layouts-") as folder:
        np.save(os.path.join(folder, "base.npy"), base)
        run_workers(env_id, folder, tasks, progress)
        chunks = []
        for seeds in tasks:
            with np.load(os.path.join(folder, f"{seeds.start}.npz")) as stored:
                chunks.append(dict(stored))
        return chunks


def run_workers(env_id: str, folder: str, tasks: list[range], progress: BuildProgress) -> None:
    """Encode `tasks` into `folder` in one worker process per core; on any exception here (a
    stop signal's among them) the workers are killed and reaped before it goes on."""
    processes = []
    try:
        processes += start_workers(env_id, folder, tasks)
        progress.start(len(processes))
        while any(process.poll() is None for process in processes):
            done = sum(1 for name in os.listdir(folder) if name.endswith(".npz"))
            progress.update(done * compact.CHUNK)
            time.sleep(0.5)
    finally:
        end_workers(processes)
    check_workers(env_id, processes)
    progress.finish()


def start_workers(env_id: str, folder: str, tasks: list[range]) -> list[subprocess.Popen]:
    """One worker process per core (at most one per task), each encoding its share of `tasks`
    into `folder`/start.npz; `base.npy` must be there."""
    workers = min(len(tasks), os.cpu_count() or 1)
    root = str(pathlib.Path(__file__).resolve().parents[3])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", __name__, env_id, folder]
    processes = []
    try:
        for share in (tasks[k::workers] for k in range(workers)):
            processes.append(
                subprocess.Popen(
                    [*command, *(f"{t.start}:{t.stop}" for t in share)],
                    env=env,
                    stdin=subprocess.PIPE,  # Its end tells a worker that this process is gone.
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
    except BaseException:
        end_workers(processes)
        raise
    return processes


def end_workers(processes: list[subprocess.Popen]) -> None:
    """Kill the workers still running and reap them all."""
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdin.close()


def check_workers(env_id: str, processes: list[subprocess.Popen]) -> None:
    """Raise ValueError with a failed worker's last line of stderr, if one failed."""
    for process in processes:
        if process.returncode != 0:
            tail = process.stderr.read().strip().splitlines()[-1:] or ["no output"]
            raise ValueError(
                f"The layout bank of {env_id} could not be built: a worker failed with "
                f"{tail[0]!r}; run again to rebuild it, or set layout_bank lower."
            )
        process.stderr.close()


def _work(env_id: str, folder: str, ranges: list[str]) -> None:
    """A worker of `_chunks`: encode each `start:stop` range of seeds into `folder`/start.npz.

    Should the building process end without ending it (SIGKILL, `os._exit`), its end of this
    worker's stdin closes: the worker then removes `folder` and exits, rather than go on alone.
    """
    threading.Thread(target=_exit_with_parent, args=(folder,), daemon=True).start()
    os.nice(WORKER_NICE)
    base = np.load(os.path.join(folder, "base.npy"))
    for text in ranges:
        start, stop = (int(part) for part in text.split(":"))
        chunk = compact.encode_chunk(env_id, range(start, stop), base)
        partial = os.path.join(folder, f"{start}.partial.npy")
        with open(partial, "wb") as file:
            np.savez(file, **chunk)
        os.replace(partial, os.path.join(folder, f"{start}.npz"))


def _exit_with_parent(folder: str) -> None:
    # The file descriptor, not sys.stdin: a daemon thread inside sys.stdin's buffer would hold
    # its lock, which the interpreter's exit then waits for in vain (a fatal error).
    while os.read(0, 4096):  # Empty at end of file: the builder closed it, or is gone.
        pass
    shutil.rmtree(folder, ignore_errors=True)
    os._exit(1)


if __name__ == "__main__":
    _work(sys.argv[1], sys.argv[2], sys.argv[3:])

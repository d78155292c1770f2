"""docs/results/env_throughput.md, from the environment throughput benchmark's newest sitting."""

from __future__ import annotations

import os

from benchmarks import common

PAGE = os.path.join(common.ROOT, "docs", "results", "env_throughput.md")
RECORDS = os.path.join(common.RESULTS, "env_throughput.jsonl")

_INTRO = """# Environment throughput

Env steps per second of each batching layer, as a ratio to a plain gymnasium loop: `BatchEnv` in
process, `BatchEnv` of `ExternalProcess` children, and `simulate` with the `MockAlgorithm` in a
compiled loop or one `tf.function` call per step (the benchmark's docstring says what each row
adds). Generated from `benchmarks/results/env_throughput.jsonl` by:

```sh
python -m benchmarks.env_throughput --page
```
"""

_AFTER = """
A child process costs a pipe round trip and pickling per env and step, while these envs take a
few microseconds to step, and children on 2 cores have little to run in parallel; see
[Environment processes](../tools.md#environment-processes) for when they pay off. The in-graph
step pays the `tf.numpy_function` crossing and the variable updates once per batch step,
whatever the env; training runs a whole rollout per compiled call, which saves the per-call
dispatch of the last row.
"""


def page(records: list[dict]) -> str:
    if not records:
        return _INTRO + "\nNo sitting recorded yet.\n"
    rows = common.sitting(records)
    first, loads = rows[0], [row["load"] for row in rows]
    header = (
        f"{first['date']} | {first['machine']} | commit {first['commit']} | {first['envs']} envs, "
        f"{first['steps']} batch steps, median of {first['repeats']} timed runs | load "
        f"{min(loads):.1f}-{max(loads):.1f}"
    )
    lines = ["| env | mode | env steps/s | ratio to raw |", "| --- | --- | ---: | ---: |"]
    for row in rows:
        lines.append(
            f"| {row['env']} | {row['mode']} | {row['steps_per_second']:,.0f} | "
            f"{row['ratio']:.2f}x |"
        )
    return "\n".join([_INTRO, header, "", *lines, _AFTER])

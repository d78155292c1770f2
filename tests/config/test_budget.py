"""The training budget: whole training calls over all ranks, and each rank's share of envs."""

import pytest

from agents.config import budget
from agents.config.errors import UsageError

CONFIG = {"num_agents": 8, "rollout_length": 16, "rollouts_per_call": 2, "train_steps": 1000}


def test_per_rank_envs_multiply_a_call_by_the_ranks():
    assert budget.rank_envs(CONFIG, 4) == 8
    assert budget.call_steps(CONFIG, 1) == 16 * 2 * 8 == 256
    assert budget.call_steps(CONFIG, 4) == 1024
    assert budget.describe(CONFIG, 4) == (
        "train_steps 1000 -> 1024 env steps, rounded up to 1 training call of "
        "8 envs x 16 steps x 2 rollouts x 4 ranks."
    )


def test_a_global_batch_splits_the_envs_so_a_call_is_one_processs():
    config = dict(CONFIG, mpi_batch="global")
    assert [budget.rank_envs(config, ranks) for ranks in (1, 2, 4, 8)] == [8, 4, 2, 1]
    assert {budget.call_steps(config, ranks) for ranks in (1, 2, 4, 8)} == {256}
    assert budget.train_budget(config, 4) == 1024
    assert budget.describe(config, 4).endswith(
        "4 training calls of 2 envs x 16 steps x 2 rollouts x 4 ranks."
    )


def test_a_global_batch_that_does_not_split_is_one_line_naming_a_value_that_would():
    with pytest.raises(UsageError) as error:
        budget.rank_envs(dict(CONFIG, num_agents=10, mpi_batch="global"), 4)
    assert str(error.value) == (
        "mpi_batch=global splits num_agents=10 over 4 ranks: num_agents must be a multiple of "
        "4 (e.g. 8), or mpi_batch=per_rank."
    )

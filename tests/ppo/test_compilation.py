"""Tests for how each agent family's update is compiled (plain Python, and the agent using it)."""

import pytest

from agents.ppo import compilation


@pytest.mark.parametrize(
    "config, xla",
    [
        ({"agent": "ppo"}, True),
        ({"agent": "rnd_ppo"}, False),
        ({"agent": "rnd_ppo", "conv_stack": "dqn"}, False),
        ({"agent": "rnd_ppo", "conv_stack": "tiles8"}, True),
        ({"agent": "rnd_ppo", "conv_stack": "tiles8", "update_compiler": "graph"}, False),
        ({"agent": "ppo", "update_compiler": "auto"}, True),
        ({"agent": "ppo", "update_compiler": "graph"}, False),
        ({"agent": "rnd_ppo", "update_compiler": "xla"}, True),
    ],
)
def test_the_family_chooses_unless_the_config_says(config, xla):
    assert compilation.xla_update(config) is xla


def test_onednn_only_for_the_pixel_agent():
    assert compilation.onednn("rnd_ppo") and not compilation.onednn("ppo")


@pytest.mark.parametrize("choice, jit", [("auto", True), ("graph", False)])
def test_the_agents_update_is_compiled_as_chosen(choice, jit):
    from agents import tools
    from agents.ppo.algorithm import PPO
    from agents.scripts import configs

    config = tools.AttrDict(dict(configs.debug(), update_compiler=choice))
    envs = [tools.MockEnvironment((3,), (2,), 3, 9, index) for index in range(2)]
    env = tools.InGraphBatchEnv(tools.BatchEnv(envs, blocking=True))
    agent = PPO(env, config)
    assert agent._update_rollout._jit_compile is jit

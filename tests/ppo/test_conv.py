"""Tests for the conv-stack geometry, against hand-computed DQN sizes."""

from agents.ppo import conv

DQN = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


def test_output_size_of_the_dqn_stack_on_84_pixels():
    assert conv.output_size(84, DQN) == 7  # 84 -> 20 -> 9 -> 7.
    assert conv.output_size(35, DQN) <= 0  # Too small: 35 -> 7 -> 2 -> 0.


def test_min_input_size_is_the_smallest_size_with_an_output():
    for stack in (DQN, ((32, 8, 4), (64, 4, 2), (64, 4, 1))):
        size = conv.min_input_size(stack)
        assert conv.output_size(size, stack) == 1 and conv.output_size(size - 1, stack) <= 0
    assert conv.min_input_size(DQN) == 36

"""Tests for the conv-stack geometry, against hand-computed DQN sizes."""

from agents.ppo.networks import conv

DQN = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


def test_output_size_of_the_dqn_stack_on_84_pixels():
    assert conv.output_size(84, DQN) == 7  # 84 -> 20 -> 9 -> 7.
    assert conv.output_size(35, DQN) <= 0  # Too small: 35 -> 7 -> 2 -> 0.


def test_min_input_size_is_the_smallest_size_with_an_output():
    for stack in (DQN, ((32, 8, 4), (64, 4, 2), (64, 4, 1))):
        size = conv.min_input_size(stack)
        assert conv.output_size(size, stack) == 1 and conv.output_size(size - 1, stack) <= 0
    assert conv.min_input_size(DQN) == 36


def test_multiply_adds_of_a_hand_computed_stack():
    # 10x10x2 -> (3 filters, 4x4, stride 2) -> 4x4x3: 16 * 3 * 16 * 2 = 1,536;
    # -> (5 filters, 2x2, stride 2) -> 2x2x5: 4 * 5 * 4 * 3 = 240.
    assert conv.multiply_adds(10, 2, ((3, 4, 2), (5, 2, 2))) == 1536 + 240


def test_the_tile_stack_reads_56_pixel_frames_cell_by_cell_for_an_eighth_of_the_work():
    tiles = conv.POLICY_STACKS["tiles8"]
    assert conv.min_input_size(tiles) == 56  # 7 cells of 8 pixels: 56 -> 7 -> 3 -> 1.
    assert tiles[0][1:] == (8, 8)  # One kernel position per tile, no overlap.
    for stacks in (conv.POLICY_STACKS, conv.RND_STACKS):
        ratio = conv.multiply_adds(56, 1, stacks["dqn"]) / conv.multiply_adds(56, 1, tiles)
        assert 8.0 < ratio < 9.0

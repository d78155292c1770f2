"""Batched PPO on TensorFlow 2: in-graph batch environments, PPO agents and training scripts."""

__version__ = "0.1.0"

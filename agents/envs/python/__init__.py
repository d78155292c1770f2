"""Environments stepped in Python: gymnasium's make, wrappers, vector envs and their batch."""

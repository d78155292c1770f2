"""Proximal Policy Optimization: the algorithm, its losses, networks and normalizers."""

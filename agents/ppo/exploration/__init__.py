"""Exploration bonuses: random network distillation, NovelD's episodic gate and the RND agent."""

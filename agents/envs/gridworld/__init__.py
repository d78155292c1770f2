"""MiniGrid as TensorFlow ops: minigrid's grid worlds, batched, stepped inside the compiled call.

`GridState` holds a batch of worlds (cells as minigrid's `Grid.encode()`, agent position and
direction, the carried object, the step count, the object to fetch); `dynamics.step` applies
minigrid's seven actions, `view.observe` renders the agent's egocentric 7x7 view with minigrid's
occlusion, and `MiniGridEnv` is the `NativeEnv` of a minigrid id, its resets drawn from a bank of
layouts made by minigrid's own generator (`layouts`).
"""

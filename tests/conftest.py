"""The suite imports modules that load TensorFlow (agents.ppo, agents.tools) before it trains, as a
user who imports TensorFlow first does; so it makes TensorFlow's process settings first, as
`agents.runtime.prepare()` is there for, and runs in the worker train as runs started afresh do."""

from agents.runtime import prepare

prepare()

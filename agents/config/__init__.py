"""Config handling, in one place: named configs and config.yaml files, overrides as values or
`key=value` text, validated against the schema (`agents/config/schema.py`) where they enter.

Modules: `named` (`--config` names and paths), `files` (config.yaml), `values` (overrides and
whole-config checks), `errors` (`UsageError`). Plain Python: no TensorFlow.
"""

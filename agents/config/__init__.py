"""Config handling, in one place: the schema, named configs, config.yaml files and overrides.

Named configs and config.yaml files, overrides as values or `key=value` text, are validated
against the schema (`agents/config/schema.py`) where they enter.

Modules: `named` (`--config` names and paths), `files` (config.yaml), `values` (overrides and
whole-config checks), `errors` (`UsageError`). Plain Python: no TensorFlow.
"""

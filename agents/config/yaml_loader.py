"""The YAML reader of config files and search spaces: the safe loader, without aliases, with
floats in any of their usual spellings."""

from __future__ import annotations

import re
from typing import IO, Any

import yaml


class PlainLoader(yaml.SafeLoader):
    """YAML's safe loader without anchors and aliases, which config files never hold: a few
    nested aliases (a "billion laughs" file of 1.5 KB) would expand without end.

    Numbers follow YAML 1.2 and Python: PyYAML's YAML 1.1 resolver reads `1e-3` (no dot) as the
    string "1e-3", so a learning rate written that way would be refused as a string.
    """

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None,
                None,
                "an alias (*), which config files do not use",
                self.peek_event().start_mark,
            )
        return super().compose_node(parent, index)


# Checked after YAML 1.1's own int and float resolvers: only spellings they leave as strings
# (an exponent without a dot, `1e-3`, `2E+5`) reach it.
PlainLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load(handle: IO[str]) -> Any:
    """The document in `handle`, read with `PlainLoader`.

    Raises:
        yaml.YAMLError: If it is not valid YAML or uses an alias.
    """
    return yaml.load(handle, PlainLoader)  # noqa: S506 (a SafeLoader, without aliases)

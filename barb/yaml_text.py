"""YAML text to Python values: the one way Barb reads its YAML files (instruments, events,
patterns, reference texts, prompts).

libyaml's C parser, when PyYAML was built with it, reads these files about ten times faster
than the pure-Python one (the pattern and instrument files alone cost ~30 ms of a fresh
process's first answer); both accept exactly the safe subset.
"""

from __future__ import annotations

from typing import IO, Any

import yaml

_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(stream: str | bytes | IO[str] | IO[bytes]) -> Any:
    """The value of a YAML document (safe tags only)."""
    return yaml.load(stream, Loader=_LOADER)

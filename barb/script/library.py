"""Everything Barb Script knows, registered once: builtins, indicators, named patterns.

Importing this module fills the registry in ``functions.py``; the validator, the evaluator
and the reference texts import it, so none of them can see a partial table.
"""

import barb.indicator_functions
import barb.script.builtins  # noqa: F401
from barb.patterns import register_patterns

register_patterns()

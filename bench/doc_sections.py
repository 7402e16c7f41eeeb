"""Writing a benchmark's results into its section of a document (docs/benchmarks.md)."""

from __future__ import annotations

import re
from pathlib import Path


def replace_section(path: Path, section: str, text: str, new_doc: str = "# Benchmarks") -> None:
    """``text`` (which begins with the ``section`` heading) in place of that section, up to
    the next ``## ``, or added at the end; every other section stays as it is, and one blank
    line follows the section. A missing document is made, headed ``new_doc``."""
    doc = path.read_text(encoding="utf-8") if path.exists() else new_doc + "\n"
    text = text.rstrip("\n")
    # The heading as a whole line: "## Charts" also begins "## Charts of many groups".
    found = re.search(rf"^{re.escape(section)}$", doc, flags=re.MULTILINE)
    if found:
        rest = doc[found.end() :]
        tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
        doc = doc[: found.start()] + text + "\n" + tail
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc, encoding="utf-8")

"""Writing a benchmark's results into its section of a document (docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path


def replace_section(path: Path, section: str, text: str) -> None:
    """``text`` (which begins with the ``section`` heading) in place of that section, up to
    the next ``## ``, or added at the end; every other section stays as it is."""
    doc = path.read_text(encoding="utf-8")
    if section in doc:
        head, _, rest = doc.partition(section)
        tail = rest[rest.find("\n## ") :] if "\n## " in rest else ""
        doc = head + text + "\n" + tail
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    path.write_text(doc, encoding="utf-8")

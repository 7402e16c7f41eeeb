"""The benchmarks' one writer of their sections of docs/benchmarks.md."""

from __future__ import annotations

from pathlib import Path

from bench.doc_sections import replace_section

DOC = """# Benchmarks

## Charts of many groups

many: old

## Charts

charts: old

## Notes

kept
"""


def test_a_section_is_replaced_by_its_whole_heading_and_others_stay(tmp_path: Path) -> None:
    """ "## Charts" also begins "## Charts of many groups", the section before it: that one
    stays, and one blank line still parts the new text from the next heading (the memory
    benchmark's own writer left none)."""
    doc = tmp_path / "benchmarks.md"
    doc.write_text(DOC)
    replace_section(doc, "## Charts", "## Charts\n\ncharts: new\n")
    assert doc.read_text() == DOC.replace("charts: old", "charts: new")


def test_a_missing_section_or_document_is_added(tmp_path: Path) -> None:
    doc = tmp_path / "docs" / "reliability.md"
    replace_section(doc, "## Engine inputs", "## Engine inputs\n\nrows", new_doc="# Reliability")
    replace_section(doc, "## More", "## More\n\nmore")
    assert doc.read_text() == "# Reliability\n\n## Engine inputs\n\nrows\n\n## More\n\nmore\n"

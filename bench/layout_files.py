"""CSV files of bars in vendors' layouts, written the same way by the import benchmark
(``bench.import_memory``) and the import's tests (``tests/data/test_import_streaming.py``):
one writer per layout, so that what is measured is what is tested.

Each takes a frame with a naive ``timestamp`` column and ``open``..``volume``, and returns
the path it wrote.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

PRICES = ["open", "high", "low", "close", "volume"]


def european_csv(
    bars: pd.DataFrame,
    path: Path,
    split: bool,
    date_format: str = "%d.%m.%Y",
    float_format: str | None = None,
) -> Path:
    """A European spreadsheet's: ';' between fields, decimal commas, dotted dates (or
    ``date_format``'s), in one ``timestamp`` column (``02.01.2024 09:30``) or ``Date;Time``
    columns; prices as pandas writes them, or in ``float_format`` (``%.2f``: ``4500,25``)."""
    out = bars[PRICES].copy()
    if split:
        out.insert(0, "Time", bars["timestamp"].dt.strftime("%H:%M"))
        out.insert(0, "Date", bars["timestamp"].dt.strftime(date_format))
    else:
        out.insert(0, "timestamp", bars["timestamp"].dt.strftime(f"{date_format} %H:%M"))
    out.to_csv(path, sep=";", decimal=",", index=False, float_format=float_format)
    return path


def russian_csv(bars: pd.DataFrame, path: Path) -> Path:
    """A Russian Excel's or terminal's: the European file under Russian names
    (``Дата;Время;Открытие;…;Объём``), in UTF-8."""
    out = european_csv(bars, path, split=True)
    names = "Дата;Время;Открытие;Максимум;Минимум;Закрытие;Объём"
    text = out.read_text(encoding="utf-8")
    out.write_text(names + text[text.index("\n") :], encoding="utf-8")
    return path


def finam_csv(bars: pd.DataFrame, path: Path) -> Path:
    """Finam's export: ``<TICKER>;<PER>;<DATE>;<TIME>;<OPEN>;…;<VOL>``, ``20240304;093000``."""
    out = bars[PRICES].copy()
    out.columns = [f"<{c.upper()}>" if c != "volume" else "<VOL>" for c in PRICES]
    out.insert(0, "<TIME>", bars["timestamp"].dt.strftime("%H%M%S"))
    out.insert(0, "<DATE>", bars["timestamp"].dt.strftime("%Y%m%d"))
    out.insert(0, "<PER>", 1)
    out.insert(0, "<TICKER>", "NQ")
    out.to_csv(path, sep=";", index=False)
    return path

"""Render the README's chart images from the sample data: ``.venv/bin/python
docs/images/render_readme_images.py`` (the charts are drawn as the bot sends them)."""

from __future__ import annotations

from pathlib import Path

from barb import execute
from barb.charts import render_chart

HERE = Path(__file__).parent
IMAGES = {
    "range_by_weekday.png": (
        {
            "session": "RTH",
            "from": "daily",
            "map": {"weekday": "dayname()"},
            "group_by": "weekday",
            "select": "mean(range)",
        },
        "en",
    ),
    "rsi_2024.png": (
        {"session": "RTH", "from": "daily", "period": "2024", "map": {"rsi": "rsi(close, 14)"}},
        "en",
    ),
    "overnight_range_correlation.png": (
        {
            "session": "RTH",
            "from": "daily",
            "map": {"on_range": "session_high('OVERNIGHT') - session_low('OVERNIGHT')"},
            "select": "correlation(on_range, range)",
        },
        "en",
    ),
    "atr_now_ru.png": (
        {
            "session": "RTH",
            "from": "daily",
            "period": "last_2_years",
            "map": {"atr14": "atr(14)"},
            "sort": "timestamp desc",
            "limit": 1,
        },
        "ru",
    ),
}


def main() -> None:
    for name, (query, language) in IMAGES.items():
        result = execute(query, "NQ")
        png = render_chart(result, language=language)
        if png is None:
            raise SystemExit(f"{name}: no chart ({result.to_dict().get('message')})")
        (HERE / name).write_bytes(png)
        print(f"{name}: {len(png):,} bytes")


if __name__ == "__main__":
    main()

"""The README's picture of a Russian exchange, rendered from a real run:
``.venv/bin/python docs/images/render_chat_screenshot.py`` (needs Debian's ``chromium``).

The bot is wired as ``barb bot`` wires it (the tests' harness) and talks HTTP to the fake
Bot API on 127.0.0.1; only the model's turns are scripted, and its commentary quotes the
numbers of the result it was given. What the bot sent (the plan's HTML and buttons, the
chart's PNG, its caption and buttons) is laid out as a chat at a phone's width (390 CSS
pixels, drawn at 2x) and photographed with headless Chromium.
"""

from __future__ import annotations

import asyncio
import base64
import html
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "telegram"), str(ROOT / "tests" / "llm")]
os.environ.setdefault("PTB_TIMEDELTA", "1")

from bot_harness import ALICE, WEEKDAY_RANGE, barb_bot, keyboard_data  # noqa: E402
from fake_bot_api import FakeBotAPI  # noqa: E402
from PIL import Image  # noqa: E402

from barb import execute  # noqa: E402
from barb.i18n import decimal  # noqa: E402
from bot.llm.messages import ModelRequest  # noqa: E402
from bot.llm.scripted import text, tool_call, turn  # noqa: E402

OUT = ROOT / "docs" / "images" / "chat_ru.png"
QUESTION = "средний диапазон RTH по дням недели?"
WIDTH = 390
SCALE = 2
#: "On Monday" and so on, as the commentary says it.
ON_DAY = {"Mon": "в понедельник", "Tue": "во вторник", "Wed": "в среду", "Thu": "в четверг"}
ON_DAY |= {"Fri": "в пятницу"}


def model(request: ModelRequest) -> Any:
    """The plan, then a commentary on the numbers the tool returned (read from the engine's
    own result of the same query, which is what the model was shown)."""
    if not request.messages[-1].tool_results:
        return turn(
            "Посчитаю средний диапазон RTH (high − low) для каждого дня недели по всем данным.",
            tool_call("execute_query", query=WEEKDAY_RANGE),
        )
    table = execute(WEEKDAY_RANGE, "NQ").table
    assert table is not None
    ranges = table.set_index("weekday")["mean_range"]
    wide, narrow = ranges.idxmax(), ranges.idxmin()
    spread = (ranges.max() - ranges.min()) / ranges.min() * 100
    return text(
        f"Шире всего RTH-диапазон **{ON_DAY[wide]}**: {decimal(ranges.max(), 'ru', 1)} "
        f"пункта в среднем; уже всего {ON_DAY[narrow]} ({decimal(ranges.min(), 'ru', 1)}). "
        f"Разница между днями невелика: {decimal(spread, 'ru', 1)} %.\n\n"
        "_Данные синтетические: это пример, не история рынка._"
    )


async def exchange() -> dict[str, Any]:
    """Ask, press Run, and return what Telegram got: the plan and the answer's photo."""
    fake = FakeBotAPI()
    await fake.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with barb_bot(fake, f"sqlite+aiosqlite:///{tmp}/barb.db", model=model):
                fake.inject(
                    fake.message_update(
                        chat_id=ALICE, user_id=ALICE, text=QUESTION, language_code="ru"
                    )
                )
                [plan] = await fake.wait_for("sendMessage", chat_id=ALICE)
                run, _ = keyboard_data(plan.result)
                fake.inject(
                    fake.callback_update(
                        chat_id=ALICE,
                        user_id=ALICE,
                        message_id=plan.result["message_id"],
                        data=run,
                    )
                )
                [photo] = await fake.wait_for("sendPhoto", chat_id=ALICE)
                await fake.wait_for("editMessageText", 2, chat_id=ALICE)
    finally:
        await fake.stop()
    return {
        "plan_html": plan.params["text"],
        "plan_buttons": plan.result["reply_markup"]["inline_keyboard"],
        "photo": photo.files["photo"].content,
        "caption_html": photo.params["caption"],
        "photo_buttons": photo.result["reply_markup"]["inline_keyboard"],
    }


def buttons(rows: list[list[dict[str, Any]]]) -> str:
    return "".join(
        '<div class="keys">'
        + "".join(f'<div class="key">{html.escape(b["text"])}</div>' for b in row)
        + "</div>"
        for row in rows
    )


def page(sent: dict[str, Any]) -> str:
    """A chat as Telegram lays it out on a phone: the person's bubble on the right, Barb's
    on the left with their inline keyboards under them. The bot's HTML is shown as sent."""
    png = base64.b64encode(sent["photo"]).decode()
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; width: {WIDTH}px; background: #cfdcc0; font: 15px/1.35 "Noto Sans",
       "DejaVu Sans", sans-serif; color: #000; }}
.top {{ background: #fff; padding: 10px 14px; border-bottom: 1px solid #d0d0d0; }}
.top b {{ display: block; font-size: 16px; }} .top span {{ color: #8a8a8a; font-size: 13px; }}
.chat {{ padding: 10px 8px 14px; }}
.row {{ display: flex; margin: 6px 0; }} .row.me {{ justify-content: flex-end; }}
.bubble {{ max-width: 82%; background: #fff; border-radius: 14px; padding: 7px 10px;
          white-space: pre-wrap; word-wrap: break-word; box-shadow: 0 1px 1px #0002; }}
.me .bubble {{ background: #e2fec5; }}
.photo {{ padding: 0; overflow: hidden; }}
.photo img {{ display: block; width: 100%; }} .photo .cap {{ padding: 7px 10px; }}
.col {{ display: flex; flex-direction: column; max-width: 82%; }}
.col .bubble {{ max-width: none; }}
.keys {{ display: flex; gap: 4px; margin-top: 4px; }}
.key {{ flex: 1; text-align: center; background: #0000002e; color: #fff; font-weight: 600;
       border-radius: 10px; padding: 8px 6px; font-size: 14px; }}
pre, code {{ font-family: "DejaVu Sans Mono", monospace; font-size: 13px; }}
pre {{ margin: 4px 0; }}
</style></head><body>
<div class="top"><b>Barb</b><span>бот</span></div>
<div class="chat">
<div class="row me"><div class="bubble">{html.escape(QUESTION)}</div></div>
<div class="row"><div class="col"><div class="bubble">{sent["plan_html"]}</div>
{buttons(sent["plan_buttons"])}</div></div>
<div class="row"><div class="col" style="width:82%"><div class="bubble photo">
<img src="data:image/png;base64,{png}"><div class="cap">{sent["caption_html"]}</div></div>
{buttons(sent["photo_buttons"])}</div></div>
</div></body></html>"""


def screenshot(document: str, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "chat.html"
        page_file.write_text(document, encoding="utf-8")
        shot = Path(tmp) / "shot.png"
        subprocess.run(
            [
                "chromium",
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={tmp}/profile",
                "--hide-scrollbars",
                f"--force-device-scale-factor={SCALE}",
                f"--window-size={WIDTH},3000",
                f"--screenshot={shot}",
                page_file.as_uri(),
            ],
            check=True,
            capture_output=True,
        )
        image = Image.open(shot).convert("RGB")
        # The window is taller than the chat: cut where the wallpaper colour runs to the end.
        background = image.getpixel((image.width - 1, image.height - 1))
        bottom = image.height
        while bottom > 0 and all(
            image.getpixel((x, bottom - 1)) == background for x in range(0, image.width, 7)
        ):
            bottom -= 1
        image.crop((0, 0, image.width, min(image.height, bottom + 14 * SCALE))).save(
            out, optimize=True
        )


def main() -> None:
    sent = asyncio.run(exchange())
    screenshot(page(sent), OUT)
    print(f"{OUT.relative_to(ROOT)}: {json.dumps(sent['caption_html'][:80], ensure_ascii=False)}")


if __name__ == "__main__":
    main()

"""What the model reads after a query, read back from the requests the scripted provider got,
and checked against the CSV the person got from the same run."""

from __future__ import annotations

import csv
import io

import pytest

from bot.assistant.replies import Asker
from bot.llm.scripted import text, tool_call, turn

ALICE = Asker(chat_id=100, user_id=1)

MONTHLY_RETURNS = {
    "session": "RTH",
    "from": "monthly",
    "period": "2023",
    "map": {"ret": "(close - prev(close)) / prev(close) * 100"},
    "select": "ret",
}


def tool_results(request) -> list:
    return [r for m in request.messages if m.role == "tool" for r in m.tool_results]


async def test_the_model_reads_twelve_labelled_monthly_returns(make_assistant) -> None:
    assistant = make_assistant(
        turn(
            "I'll compute the monthly returns of 2023.",
            tool_call("execute_query", query=MONTHLY_RETURNS),
        ),
        text("August was the best month."),
    )
    reply = await assistant.ask(ALICE, "monthly returns in 2023?")
    done = await assistant.resume(reply.pending.id, ALICE.user_id, run=True)
    [proof] = done.proofs
    rows = list(csv.DictReader(io.StringIO(proof.csv.decode("utf-8-sig"))))
    assert list(rows[0]) == ["month", "ret", "source"]  # the label, the value, whose data
    assert [r["month"] for r in rows] == [f"2023-{m:02d}" for m in range(1, 13)]

    [result] = tool_results(assistant.provider.requests[-1])
    lines = result.content.splitlines()
    assert lines[0] == "Result: 12 rows of monthly bars, in time order, all shown:"
    assert lines[1] == "month,ret"
    read = dict(line.split(",") for line in lines[2:14])
    # Every month, once, by its label, with the value the person's CSV has.
    assert list(read) == [r["month"] for r in rows]
    for row in rows:
        if row["ret"] == "":
            assert read[row["month"]] == "n/a"
        else:
            assert float(read[row["month"]]) == pytest.approx(float(row["ret"]), rel=1e-3)
    assert len(result.content) < 700

"""No JSON input ends in an internal error, a traceback or a run past the time limit.

The CI share of the hostile run (bench/hostile.py runs 10,000): hypothesis queries over
Barb Script's grammar and every hand-made pathological input, through the engine and through
`barb query`, on the small data set of this folder's conftest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hostile_queries import (
    Verdict,
    pathological_texts,
    queries,
    query_texts,
    run_cli,
    run_engine,
)
from hypothesis import HealthCheck, example, given, settings

from barb.script.limits import default_limits
from barb.settings import EngineSettings, default_settings

# Generous: a breach is a query that hangs, not one that is a little slow on a busy machine.
TIMEOUT_S = 30.0
HOSTILE = settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
PATHOLOGICAL = pathological_texts()


@pytest.fixture(scope="module")
def cli_on_small_data(engine_settings: EngineSettings) -> Iterator[CliRunner]:
    """`barb query` reads its settings from the environment: point it at the test bars."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BARB_DATA_DIR", str(engine_settings.data_dir))
        default_settings.cache_clear()
        default_limits.cache_clear()
        yield CliRunner()
    default_settings.cache_clear()


def assert_kept_promise(verdict: Verdict) -> None:
    assert not verdict.broken, f"{verdict.name}: {verdict}"


@pytest.mark.parametrize(("name", "text"), PATHOLOGICAL, ids=[n for n, _ in PATHOLOGICAL])
def test_pathological_input_through_the_engine(
    name: str, text: str, engine_settings: EngineSettings
) -> None:
    verdict = run_engine(name, text, engine_settings, TIMEOUT_S)
    assert_kept_promise(verdict)


@pytest.mark.parametrize(("name", "text"), PATHOLOGICAL, ids=[n for n, _ in PATHOLOGICAL])
def test_pathological_input_through_the_cli(
    name: str, text: str, cli_on_small_data: CliRunner
) -> None:
    assert_kept_promise(run_cli(name, text, cli_on_small_data))


@HOSTILE
@given(query=queries())
# first() of a week with no row kept was pandas' NaT, which the summary could not write.
@example(
    query={"from": "daily", "session": "RTH", "map": {"a": "week()"}, "where": "open < open",
           "select": "first(a)"}
)  # fmt: skip
def test_generated_queries_through_the_engine(query: dict, engine_settings: EngineSettings):
    assert_kept_promise(run_engine("generated", json.dumps(query), engine_settings, TIMEOUT_S))


@HOSTILE
@given(text=query_texts())
# A product of prices overflows float's range: it had been an internal error (numpy's
# overflow warning, an error under the tests' filters).
@example(
    text='{"from": "1h", "session": "RTH", "where": "cumprod(open) < open", '
    '"select": "correlation(open, close)"}'
)
def test_generated_texts_through_the_cli(text: str, cli_on_small_data: CliRunner) -> None:
    assert_kept_promise(run_cli("generated", text, cli_on_small_data))


@pytest.mark.parametrize(
    ("text", "error_type", "words"),
    [
        ('{"select": ' + "[" * 500 + '"close"' + "]" * 500 + "}", "QueryTooLarge", "nests JSON"),
        ('{"limit": ' + "9" * 5_000 + "}", "QueryTooLarge", "5,000-digit number"),
        ('{"period": "\\ud800"}', "InvalidQuery", "lone UTF-16 surrogate"),
        ('{"sort": "close' + " " * 100_000 + 'x"}', "QueryTooLarge", "100,018 characters long"),
    ],
    ids=["select nested 500 deep", "5,000-digit integer", "lone surrogate", "100,000 spaces"],
)
def test_barb_query_in_a_real_process_answers_in_one_json_error(
    text: str, error_type: str, words: str, engine_settings: EngineSettings, tmp_path: Path
) -> None:
    """As a person runs it: its own interpreter, real argv, real stdout and stderr."""
    arg = tmp_path / "query.json"
    arg.write_text(text, encoding="utf-8")
    env = {**os.environ, "BARB_DATA_DIR": str(engine_settings.data_dir)}
    done = subprocess.run(
        [sys.executable, "-c", CLI_FROM_FILE, str(arg)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr + done.stdout
    error = json.loads(done.stdout)
    assert error["error_type"] == error_type
    assert words in error["message"]


# argv has a length limit far below a 100,000-space query: the text comes from a file here.
CLI_FROM_FILE = (
    "import sys; from pathlib import Path; from barb.cli import main; "
    "main(['query', Path(sys.argv[1]).read_text(encoding='utf-8')])"
)

"""The caption of an uploaded file: the instrument and the import options, read strictly."""

from __future__ import annotations

import pytest

from bot.upload_caption import CaptionError, UploadOptions, read_caption

SYMBOLS = {"ES", "NQ", "CL"}


def test_options_as_on_the_command_line_and_the_words_around_them() -> None:
    caption = read_caption("nq, please: -i ES —interval 5m --columns=timestamp=T", SYMBOLS, "en")
    assert caption.symbol == "ES"  # the option's, not the word's
    assert caption.options == UploadOptions(interval="5m", columns="timestamp=T")
    assert caption.options.command() == "--interval 5m --columns timestamp=T"
    # An apostrophe in prose is not an unclosed quote; no options, the word's instrument.
    assert read_caption("NQ, it's Monday's", SYMBOLS, "en").symbol == "NQ"
    assert read_caption(None, SYMBOLS, "en").symbol is None


@pytest.mark.parametrize(
    "caption", ["--check", "-i ZZ", "--interval", "--interval 5m --interval 1m", "--format x"]
)
def test_anything_else_is_refused(caption: str) -> None:
    with pytest.raises(CaptionError):
        read_caption(caption, SYMBOLS, "en")


def test_apostrophes_in_the_words_are_no_quotes() -> None:
    """p46b #5: shlex paired the two apostrophes of "Monday's ES bars, Tuesday's too" into
    one token, ES was not found, and the file was offered as the chat's NQ. The words
    before the first option are split on spaces; only the options are read as a command
    line, where a quote not closed is still refused."""
    assert read_caption("Monday's ES bars, Tuesday's too", SYMBOLS, "en").symbol == "ES"
    caption = read_caption("Monday's ES bars --interval 5m", SYMBOLS, "en")
    assert (caption.symbol, caption.options) == ("ES", UploadOptions(interval="5m"))
    with pytest.raises(CaptionError, match=r"^the caption has a quote that is not closed\.$"):
        read_caption("Monday's ES bars --columns 'timestamp=Time", SYMBOLS, "en")


@pytest.mark.parametrize(
    ("caption", "option"),
    [
        ("ES --columns ''", "--columns"),
        ('ES --stamp ""', "--stamp"),
        ("ES --timezone=", "--timezone"),
        ("ES --interval ' '", "--interval"),
    ],
)
def test_an_empty_value_is_refused_as_no_value(caption: str, option: str) -> None:
    """p46b #7: ``--columns ''`` was taken (the offer read "Checked with the caption's
    --columns '': ; Import uses the same."), ``--stamp ""`` refused as "…not .". An empty
    value is no value, said in one sentence."""
    with pytest.raises(CaptionError) as refused:
        read_caption(caption, SYMBOLS, "en")
    assert str(refused.value) == (
        f"the caption's {option} has no value; write it as on the command line, "
        "e.g. `--timezone Asia/Dubai`."
    )


def test_date_order_is_a_caption_option_checked_by_the_importer() -> None:
    """A one-day file of 03/04/2024 dates is refused until the order is given (p46ab #6):
    the caption gives it as the command line does, and a value that is none is refused."""
    caption = read_caption("NQ --date-order day-first", SYMBOLS, "en")
    assert caption.options == UploadOptions(date_order="day-first")
    assert caption.options.command() == "--date-order day-first"
    assert caption.options.described("en") == "dates are day first"
    with pytest.raises(
        CaptionError, match=r"^--date-order takes month-first or day-first, not 'dmy'\.$"
    ):
        read_caption("NQ --date-order dmy", SYMBOLS, "en")


def test_a_fixed_offset_zone_is_refused_with_the_region_to_send() -> None:
    """r47d: `NQ --timezone EST` read a July file at IANA's UTC-5, an hour late."""
    with pytest.raises(CaptionError) as refused:
        read_caption("NQ --timezone EST", SYMBOLS, "en")
    assert str(refused.value) == (
        "`--timezone EST` is a fixed offset from UTC all year, not the clock of America/New_York "
        "with its summer time, so summer bars would be read an hour late; send the file again "
        "with `--timezone America/New_York` in the caption (or `--timezone Etc/GMT+5` for "
        "times truly kept on that offset all year, summer included)."
    )
    assert read_caption("NQ --timezone HST", SYMBOLS, "en").options.timezone == "HST"


@pytest.mark.parametrize(
    ("caption", "symbol"),
    [
        ("ES1!", "ES"),
        ("NQM24 --timezone UTC", "NQ"),
        ("CSV file, OK?", None),
        ("gold please", None),
        ("NQ GC", "NQ"),
        ("GCZ4 -i NQ", "NQ"),
    ],
)
def test_a_ticker_with_its_contract_names_the_instrument(caption: str, symbol: str | None) -> None:
    """TradingView's "ES1!" and a contract's "NQM24" name ES and NQ: they were left as
    prose, and the file taken as the chat's instrument."""
    assert read_caption(caption, SYMBOLS, "en").symbol == symbol


@pytest.mark.parametrize("caption", ["GC", "MGC, thanks", "GCZ4 --timezone UTC"])
def test_a_ticker_barb_does_not_have_is_refused(caption: str) -> None:
    """Gold sent as "GC" was checked as the chat's NQ (and told to add --any-level)."""
    with pytest.raises(CaptionError, match=r"^the caption's instrument \w+ is not one Barb has"):
        read_caption(caption, SYMBOLS, "en")

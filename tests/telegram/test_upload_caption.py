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

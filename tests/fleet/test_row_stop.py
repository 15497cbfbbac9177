"""A session row's stop (`journal.verdict.Stop`, a value class msgspec does not know) written and read back in its
parts, as the rows mirrors of every version write them: a row with a stop neither stops the mirror nor the list."""

from __future__ import annotations

import msgspec
import pytest

from wren_tui.fleet.rows import SessionRow, decode_row, encode
from wren_tui.journal.verdict import Stop


def test_a_row_with_a_stop_reads_back_as_the_stop_it_was_written_with() -> None:
    stop = Stop(11, 4532, "the last line was cut short (no newline at its end)", torn=True)
    row = SessionRow(host="h", session="s-20250301-093000-aaaa", state="torn tail", last_seq=10, stop=stop)
    data = encode(row)
    why = b"the last line was cut short (no newline at its end)"
    assert b'"stop":{"line":11,"offset":4532,"why":"%s","torn":true}' % why in data
    assert decode_row(data) == row


def test_a_row_an_earlier_mirror_wrote_with_a_stop_is_read_with_that_stop() -> None:
    data = b'{"host":"h","session":"s","state":"corrupt","stop":{"line":6,"offset":900,"why":"bad","torn":false}}'
    assert decode_row(data).stop == Stop(6, 900, "bad", torn=False)
    assert decode_row(data.replace(b',"torn":false', b"")).stop == Stop(6, 900, "bad")  # torn, when left out


@pytest.mark.parametrize(
    ("stop", "said"),
    [
        (b'{"line":"6","offset":900,"why":"bad"}', "Expected `int`, got `str` - at `$.stop.line`"),
        (b'{"offset":900,"why":"bad"}', "Object missing required field `line` - at `$.stop`"),
        (b"[6,900]", "Expected `object`, got `array` - at `$.stop`"),
        (b'{"line":6,"offset":1,"why":"b","torn":1}', "Expected `bool`, got `int` - at `$.stop.torn`"),
    ],
)
def test_a_row_whose_stop_is_not_one_is_refused_as_any_bad_row_where_its_stop_is(stop: bytes, said: str) -> None:
    with pytest.raises(msgspec.ValidationError) as refused:
        decode_row(b'{"host":"h","session":"s","state":"corrupt","stop":%s}' % stop)
    assert str(refused.value) == said

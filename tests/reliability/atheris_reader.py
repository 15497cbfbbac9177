"""Coverage-guided fuzzing of the reader and the Tail with atheris (where it installs).

Run: python -m tests.reliability.atheris_reader -runs=20000 [CORPUS_DIR]. Every input is checked
against the plain line-by-line reference reading: read_events returns exactly its events and stop
point, never raises, and a Tail fed the same bytes in chunks agrees. A failed check raises, and
atheris writes the input that made it fail (crash-*) for a regression test.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from tests.journal.helpers import reference_read, where
    from wren_tui.journal.events import Event
    from wren_tui.journal.reader import Tail, read_events

_SCRATCH = Path(tempfile.mkdtemp(prefix="wren-atheris-")) / "j.jsonl"


def check(data: bytes) -> None:
    _SCRATCH.write_bytes(data)
    result, ref = read_events(_SCRATCH), reference_read(data)
    assert result.events == ref.events, "read_events and the reference disagree on the events"
    assert where(result.stop) == where(ref.stop)
    # The same bytes fed in chunks whose size comes from the data itself, so atheris can steer it.
    step = 1 + (data[0] % 61 if data else 0)
    tail, events = Tail("fed"), list[Event]()
    for pos in range(0, len(data), step):
        events += tail.feed(data[pos : pos + step]).events
    assert events == result.events, "a Tail fed in chunks and read_events disagree"


def main() -> None:
    atheris.Setup(sys.argv, check)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

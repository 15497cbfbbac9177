"""`wren search -l` keeps the paths it lists until a session's reading ends (or the page does) and writes them together:
a Ctrl+C that lands as that write returns never writes them a second time (the page's last flush, on the way out).

The Ctrl+C is a stdout whose write takes the text, then raises KeyboardInterrupt once: a signal handled just as the
write returned, before the paths were marked written. (As a person meets it: `wren search -l` into a pipe, Ctrl+C
while it writes: the first path came out twice, then an empty line.)
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.tui.journals import user, write_journal
from wren_tui.cli.searching import _Json, _Text
from wren_tui.search.engine import search
from wren_tui.search.pages import Pager
from wren_tui.search.query import Query
from wren_tui.search.wren_session import WrenSession


class _CtrlCAfterWrite(io.BytesIO):
    """Bytes written; the first write raises KeyboardInterrupt once it has taken them."""

    interrupted = False

    def write(self, data: object) -> int:
        taken = super().write(data)  # type: ignore[arg-type]
        if not self.interrupted:
            self.interrupted = True
            raise KeyboardInterrupt
        return taken


class _Stdout:
    """A text stdout over `_CtrlCAfterWrite` (its text written through at once), with its `buffer`."""

    def __init__(self) -> None:
        self.buffer = _CtrlCAfterWrite()

    def write(self, text: str) -> int:
        self.buffer.write(text.encode())
        return len(text)

    def flush(self) -> None:
        pass


def journals(tmp_path: Path) -> list[Path]:
    paths = [tmp_path / f"s-20250301-09300{n}-aaaa.jsonl" for n in range(3)]
    for n, path in enumerate(paths):
        write_journal(path, [user(f"parrot {n}"), user("parrot again")])
    return paths


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_ctrl_c_as_listed_paths_are_written_never_writes_them_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    paths = journals(tmp_path)
    stdout = _Stdout()
    monkeypatch.setattr("sys.stdout", stdout)
    show = _Json() if as_json else _Text(False, files=True)
    pager = Pager(show, limit=None, cap=None, after=None, files=True)
    found = search([WrenSession(path) for path in paths], Query.of("parrot"), quiet=True, first=True)
    with pytest.raises(KeyboardInterrupt):
        pager.run(found)
    written = stdout.buffer.getvalue().decode().splitlines()
    listed = [json.loads(row)["path"] for row in written] if as_json else written
    assert listed == [str(paths[0])]  # the first session's path, once, and no empty line

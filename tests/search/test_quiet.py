"""`search(..., quiet=True)`, as `wren search` asks: the same hits, and a `Searched` only for a session that has
something to say (a hit, a stop, a warning, why it could not be read), not for every quiet one."""

from __future__ import annotations

from pathlib import Path

from tests.tui.journals import finished_story, user, write_journal
from wren_tui.search.engine import Hit, Searched, search
from wren_tui.search.query import Query
from wren_tui.search.wren_session import WrenSession


def test_a_quiet_search_gives_the_same_hits_and_only_the_sessions_with_something_to_say(tmp_path: Path) -> None:
    found = tmp_path / "s-20250301-000001-a.jsonl"
    write_journal(found, [*finished_story(), user("the kestrel hovers")])
    plain = tmp_path / "s-20250301-000002-b.jsonl"
    write_journal(plain, [*finished_story(), user("nothing to see")])
    torn = tmp_path / "s-20250301-000003-c.jsonl"
    write_journal(torn, [*finished_story(), user("nothing here either")])
    with torn.open("ab") as out:
        out.write(b'{"seq": 99, "torn')
    gone = tmp_path / "s-20250301-000004-d.jsonl"
    paths = [found, plain, torn, gone]

    def run(quiet: bool) -> list[Hit | Searched]:
        return list(search([WrenSession(path) for path in paths], Query.of("kestrel"), quiet=quiet))

    every, quiet = run(False), run(True)
    assert [f for f in quiet if isinstance(f, Hit)] == [f for f in every if isinstance(f, Hit)] != []
    assert [f.path for f in every if isinstance(f, Searched)] == paths
    said = {f.path: f for f in quiet if isinstance(f, Searched)}
    assert list(said) == [found, torn, gone]
    assert said[found].hits == 1 and said[torn].stop is not None and said[gone].unreadable is not None

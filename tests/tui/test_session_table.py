"""The session table the three session lists share, driven through Pilot in an app of its own: rows keyed
by session, changed in place, newest first or in the order given, columns fitted to the width, the cursor
kept on its session, Enter posting Opened, and the empty text while there is no row."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tests.tui.conftest import screen_text, wait_for
from wren_tui.tui.widgets.session_table import Cell, SessionTable

COLUMNS = ("id", "started", "note", "state")


def _row(ident: str, started: str, note: str = "", state: str = "done") -> dict[str, Cell]:
    return {"id": Cell(ident), "started": Cell(started), "note": Cell(note), "state": Cell(state)}


class _Lists(App[None]):
    def __init__(self, table: SessionTable) -> None:
        super().__init__()
        self.table = table
        self.opened: list[str] = []

    def compose(self) -> ComposeResult:
        yield self.table

    def on_mount(self) -> None:
        self.table.focus()

    def on_session_table_opened(self, event: SessionTable.Opened) -> None:
        self.opened.append(event.key)


def _newest_first() -> SessionTable:
    return SessionTable(COLUMNS, drop_first=("note",), newest_first=("started",), empty="Nothing here yet.")


def _shown(table: SessionTable) -> list[list[str]]:
    rows = table.rows
    return [[str(cell) for cell in rows.get_row_at(i)] for i in range(rows.row_count)]


async def test_rows_come_newest_first_change_in_place_and_the_cursor_stays_on_its_session() -> None:
    table = _newest_first()
    app = _Lists(table)
    async with app.run_test(size=(100, 12)) as pilot:
        assert "Nothing here yet." in screen_text(app)
        table.put("a", _row("a", "2026-01-01 10:00"))
        table.put("b", _row("b", "2026-01-02 10:00", state="live"))
        table.settle()
        await wait_for(pilot, lambda: "2026-01-02" in screen_text(app), "the rows")
        assert [row[0] for row in _shown(table)] == ["b", "a"]
        assert table.cursor_key == "b"  # the first listing: the cursor on the newest
        assert "Nothing here yet." not in screen_text(app)
        # On the top row, the cursor follows the newest session.
        table.put("c", _row("c", "2026-01-03 10:00"))
        table.settle()
        assert [row[0] for row in _shown(table)] == ["c", "b", "a"] and table.cursor_key == "c"
        await pilot.press("down", "down")
        assert table.cursor_key == "a"
        # Elsewhere it stays on its session: a newer one appears above, and one above ends.
        table.put("d", _row("d", "2026-01-04 10:00"))
        table.put("b", _row("b", "2026-01-02 10:00", state="interrupted"))
        table.settle()
        assert [row[0] for row in _shown(table)] == ["d", "c", "b", "a"]
        assert _shown(table)[2][-1] == "interrupted"
        assert table.cursor_key == "a"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.opened == ["a"], "a opened")
        # The session under the cursor goes: the cursor stays where it was, on the last row.
        table.drop("a")
        table.settle()
        assert [row[0] for row in _shown(table)] == ["d", "c", "b"] and table.cursor_key == "b"
        for key in ("b", "c", "d"):
            table.drop(key)
        table.settle()
        await wait_for(pilot, lambda: "Nothing here yet." in screen_text(app), "the empty text again")
        table.open_cursor()
        await pilot.pause()
        assert app.opened == ["a"]  # no row, nothing opened


async def test_the_columns_that_do_not_fit_are_given_up_first_and_come_back_when_there_is_room() -> None:
    table = _newest_first()
    app = _Lists(table)
    async with app.run_test(size=(60, 12)) as pilot:
        table.put("a", _row("a", "2026-01-01 10:00", note="short"))
        table.settle()
        await wait_for(pilot, lambda: "short" in screen_text(app), "the note")
        table.put("a", _row("a", "2026-01-01 10:00", note="a note far too long to fit beside the rest"))
        table.settle()
        await wait_for(pilot, lambda: "note" not in screen_text(app), "the note column given up")
        assert [str(c.label) for c in table.rows.ordered_columns] == ["id", "started", "state"]
        await pilot.resize_terminal(120, 12)
        await wait_for(pilot, lambda: "far too long" in screen_text(app), "the note column back")
        # Its widest cell gone, a column is as wide as what is left: it fits again at 60 columns.
        table.put("a", _row("a", "2026-01-01 10:00", note="short again"))
        table.settle()
        await pilot.resize_terminal(60, 12)
        await wait_for(pilot, lambda: "short again" in screen_text(app), "the note kept")
        assert table.rows.columns[next(k for k in table.rows.columns if k.value == "note")].width == len("short again")


async def test_rows_in_the_order_given_and_a_row_left_out_is_dropped() -> None:
    table = SessionTable(COLUMNS, drop_first=(), empty="none")
    app = _Lists(table)
    async with app.run_test(size=(100, 12)) as pilot:
        for key in ("x", "y", "z"):
            table.put(key, _row(key, "-"))
        table.settle(["z", "x", "y"])
        await wait_for(pilot, lambda: table.rows.row_count == 3, "three rows")
        assert [row[0] for row in _shown(table)] == ["z", "x", "y"]
        await pilot.press("down")
        table.settle(["y", "x"])  # z folded away
        assert [row[0] for row in _shown(table)] == ["y", "x"]
        assert table.get("z") is None and table.cursor_key == "x"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.opened == ["x"], "x opened")


def test_a_table_sorted_by_a_column_cannot_give_that_column_up() -> None:
    try:
        SessionTable(COLUMNS, drop_first=("started",), newest_first=("started",), empty="")
    except ValueError as exc:
        assert "started" in str(exc)
    else:
        raise AssertionError("a sort column that can be given up was accepted")

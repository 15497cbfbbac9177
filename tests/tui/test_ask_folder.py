"""The fork's folder, asked in the viewer (`f` in the fork picker): offered, editable, checked where it is typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Input, Static

from wren_tui.tui import strings
from wren_tui.tui.screens.dialogs import AskFolder

_NOT_ANSWERED = Path("/not-answered")


class _Asking(App[None]):
    """An app that asks for one folder and keeps the answer."""

    def __init__(self, offered: Path) -> None:
        super().__init__()
        self.offered = offered
        self.answer: Path | None = _NOT_ANSWERED

    def compose(self) -> ComposeResult:
        yield Static("behind")

    def on_mount(self) -> None:
        self.push_screen(AskFolder("Fork it with its files?", self.offered), self._answered)

    def _answered(self, folder: Path | None) -> None:
        self.answer = folder


async def test_enter_forks_into_the_folder_offered(tmp_path: Path) -> None:
    app = _Asking(tmp_path / "ws-fork-2")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
    assert app.answer == tmp_path / "ws-fork-2"


async def test_a_folder_typed_instead_is_the_answer_made_absolute_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = _Asking(tmp_path / "ws-fork-2")
    async with app.run_test(size=(100, 30)) as pilot:
        app.screen.query_one(Input).value = ""
        await pilot.press(*"my-fork")
        await pilot.press("enter")
        await pilot.pause()
    assert app.answer == tmp_path / "my-fork"


async def test_a_folder_with_files_in_it_is_refused_where_it_is_typed_and_the_dialog_stays(tmp_path: Path) -> None:
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine\n")
    app = _Asking(used)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AskFolder)  # still asking
        said = [n.message for n in app._notifications]
        assert said == [strings.FOLDER_USED.format(folder=used)]
        app.screen.query_one(Input).value = str(tmp_path / "empty")
        await pilot.press("enter")
        await pilot.pause()
    assert app.answer == tmp_path / "empty"
    assert (used / "keep.txt").read_text() == "mine\n"


async def test_an_empty_folder_is_taken_and_no_name_is_asked_for_again(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = _Asking(empty)
    async with app.run_test(size=(100, 30)) as pilot:
        app.screen.query_one(Input).value = "   "
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AskFolder)
        assert [n.message for n in app._notifications] == [strings.NO_FOLDER]
        app.screen.query_one(Input).value = str(empty)
        await pilot.press("enter")
        await pilot.pause()
    assert app.answer == empty


async def test_escape_cancels_and_answers_nothing(tmp_path: Path) -> None:
    app = _Asking(tmp_path / "ws-fork-2")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("escape")
        await pilot.pause()
    assert app.answer is None


async def test_a_folder_that_cannot_be_looked_at_is_refused_where_it_is_typed_and_the_viewer_stays(
    tmp_path: Path,
) -> None:
    too_long = tmp_path / ("x" * 300)  # a name longer than any file system takes: looking at it fails (ENAMETOOLONG)
    app = _Asking(tmp_path / "ws-fork-2")
    async with app.run_test(size=(100, 30)) as pilot:
        app.screen.query_one(Input).value = str(too_long)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, AskFolder)  # still asking, the viewer not crashed
        said = [n.message for n in app._notifications]
        assert len(said) == 1 and said[0].startswith(f"{too_long}: ") and said[0].endswith("Choose another.")
        app.screen.query_one(Input).value = str(tmp_path / "fine")
        await pilot.press("enter")
        await pilot.pause()
    assert app.answer == tmp_path / "fine"

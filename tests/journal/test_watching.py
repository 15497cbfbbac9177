"""`journal.watching` for a loop that is not asyncio's (`wren otel --follow`): an append is reported with its path,
and where the folder cannot be watched the follower wakes on its timer instead of failing."""

from __future__ import annotations

import threading
from pathlib import Path

from wren_tui.cli.otel import _wakes
from wren_tui.journal.watching import WAKE_MS, folder_changes_blocking

# Enough wakes (at least one every WAKE_MS) for a loaded machine to report the append: about 30 s.
WAKES = 30_000 // WAKE_MS


def test_an_append_to_a_journal_is_reported_with_its_path_to_a_blocking_follower(tmp_path: Path) -> None:
    journal = tmp_path / "s-20261201-100000-live.jsonl"
    journal.write_text('{"seq":0}\n', encoding="utf-8")
    other = tmp_path / "below"
    other.mkdir()
    reported: list[set[Path]] = []

    def follow() -> None:
        wakes = folder_changes_blocking(tmp_path, debounce_ms=10, step_ms=5)
        for paths in wakes:
            if not reported:
                # The watcher runs (its first wake): a file below the folder is not its business, the append is.
                (other / "ignored.jsonl").write_text("{}\n", encoding="utf-8")
                with journal.open("a", encoding="utf-8") as out:
                    out.write('{"seq":1}\n')
            reported.append(paths)
            if journal in paths or len(reported) > WAKES:
                break
        wakes.close()

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    follower.join(timeout=60)  # a bound for a watcher that never wakes, not a measure
    assert reported, "the watcher never woke"
    assert journal in reported[-1], reported
    assert all(path.parent == tmp_path for paths in reported for path in paths), reported


def test_otel_follow_wakes_on_its_timer_where_the_folder_cannot_be_watched(tmp_path: Path) -> None:
    wakes = _wakes([tmp_path / "not-there"])
    for _ in range(3):  # the first read, then two timer wakes: the watcher's FileNotFoundError is not raised
        next(wakes)
    wakes.close()


def test_otel_follow_wakes_again_without_a_change_so_a_writer_gone_is_seen(tmp_path: Path) -> None:
    woken: list[None] = []

    def follow() -> None:
        for wake in _wakes([tmp_path]):  # nothing is written: the watcher's timeout wakes the loop all the same
            woken.append(wake)
            if len(woken) == 3:
                return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    follower.join(timeout=60)  # a bound for a watcher that never wakes, not a measure
    assert len(woken) == 3

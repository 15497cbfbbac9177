"""The comparison behind `wren diff` and the side-by-side screen, on its own: shared prefix, turns, differences."""

from __future__ import annotations

from pathlib import Path

from tests.tui.family import FORK, FORK_AT, GRANDCHILD, LATE_FORK_AT, family
from tests.tui.journals import SESSION, finished_story, story, write_journal
from wren_tui.journal.compare import common_prefix, compare, comparison_rows


def test_a_fork_shares_its_parent_s_bytes_up_to_the_fork_point_and_no_further(tmp_path: Path) -> None:
    f = family(tmp_path)
    cmp = compare(f.parent, f.fork)
    assert cmp.shared == FORK_AT
    assert cmp.relation == f"{FORK} is a fork of {SESSION} at seq {FORK_AT}"
    # Either way round, the same prefix and the same relation.
    back = compare(f.fork, f.parent)
    assert back.shared == FORK_AT and back.relation == cmp.relation
    assert compare(f.fork, f.grandchild).relation == f"{GRANDCHILD} is a fork of {FORK} at seq 10"


def test_turns_are_paired_and_each_difference_in_calls_and_answers_is_named(tmp_path: Path) -> None:
    f = family(tmp_path)
    cmp = compare(f.parent, f.fork)
    [pair] = cmp.pairs
    assert pair.number == 1 and pair.left is not None and pair.right is not None
    assert pair.left.continued and pair.right.continued  # the turn open at the fork point goes on on both sides
    assert [c.name for c in pair.left.calls] == ["shell", "read_file", "edit_file", "shell"]
    assert [(c.name, c.outcome, c.elapsed_ms) for c in pair.right.calls] == [("shell", "failed", 880)]
    assert pair.differences == [
        "call 1: arguments",
        "call 1: elapsed",
        "call 2: only on the left",
        "call 3: only on the left",
        "call 4: only on the left",
        "answer",
    ]
    assert not cmp.same


def test_rows_fold_the_shared_prefix_into_one_line_then_align_by_turn(tmp_path: Path) -> None:
    f = family(tmp_path)
    rows = comparison_rows(compare(f.parent, f.late))
    assert rows[0].left == f"seq 1-{LATE_FORK_AT} shared"
    # The parent's turn 1 ends after the fork point (its run_end); the fork asks a second question.
    assert [r.kind for r in rows] == ["shared", "turn", "user", "end", "turn", "user", "answer", "end"]
    assert rows[1].left.startswith("turn 1 (continued)") and rows[1].right == "(no turn 1)"
    assert rows[3].left == "run ended: done" and rows[3].right == ""
    turn, user = rows[4], rows[5]
    assert turn.left == "(no turn 2)" and turn.right.startswith("turn 2 · seq")
    assert user.left == "" and user.right == "you: what was the failing case?"


def test_the_same_session_compared_with_itself_differs_nowhere(tmp_path: Path) -> None:
    path = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    cmp = compare(path, path)
    assert cmp.shared == len(finished_story()) and cmp.pairs == [] and cmp.same


def test_two_sessions_that_share_nothing_are_compared_from_their_first_turn(tmp_path: Path) -> None:
    from datetime import timedelta

    from tests.tui.journals import START

    a = write_journal(tmp_path / "a" / f"{SESSION}.jsonl", finished_story())
    b = write_journal(tmp_path / "b" / f"{SESSION}.jsonl", finished_story(), start=START + timedelta(days=1))
    cmp = compare(a, b)
    assert cmp.shared == 0 and cmp.relation is None
    assert comparison_rows(cmp)[0].left == "nothing shared"
    [pair] = cmp.pairs
    assert pair.differences == []  # the same turn, a day later: same calls, same outcomes, same answer


def test_a_damaged_side_is_compared_as_far_as_it_reads_and_says_where_it_stopped(tmp_path: Path) -> None:
    f = family(tmp_path)
    data = f.fork.read_bytes()
    f.fork.write_bytes(data[:-30])  # its last line cut short
    cmp = compare(f.parent, f.fork)
    assert cmp.right.stopped is not None and "torn tail" in cmp.right.stopped and "line 11" in cmp.right.stopped
    assert cmp.left.stopped is None
    assert cmp.pairs[0].right is not None and cmp.pairs[0].right.ended is None  # its run_end was the cut line


def test_common_prefix_counts_bytes_across_chunks(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"x" * (3 << 20) + b"abc")
    b.write_bytes(b"x" * (3 << 20) + b"abd")
    assert common_prefix(a, b) == (3 << 20) + 2
    b.write_bytes(b"x" * 10)
    assert common_prefix(a, b) == 10
    write_journal(tmp_path / f"{SESSION}.jsonl", story())

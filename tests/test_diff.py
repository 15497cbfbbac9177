"""wren diff as a user runs it: the comparison as text, or as JSON, and where a damaged side stopped."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_wren
from tests.tui.family import FORK, family
from tests.tui.journals import SESSION


def test_diff_prints_the_shared_prefix_folded_then_the_turns_side_by_side(tmp_path: Path) -> None:
    f = family(tmp_path / "journals")
    proc = run_wren(["diff", SESSION, FORK, "--dir", str(f.folder)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"A: {SESSION} (26 events)") and lines[1].startswith(f"B: {FORK} (11 events)")
    assert lines[2] == f"{FORK} is a fork of {SESSION} at seq 2"
    assert "── seq 1-2 shared ──" in lines
    call = next(line for line in lines if "unittest" in line)
    assert "pytest -q" in call and " ! " in call  # both sides of the first call on one line, marked
    assert any("differs: arguments, elapsed" in line for line in lines)
    assert lines[-1] == "they differ (rows marked ! above)"


def test_diff_json_is_the_same_comparison_for_scripts(tmp_path: Path) -> None:
    f = family(tmp_path)
    proc = run_wren(["diff", str(f.parent), str(f.fork), "--json"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["shared"] == 2
    assert document["left"]["id"] == SESSION and document["right"]["stopped"] is None
    [pair] = document["pairs"]
    assert pair["right"]["calls"][0] == {
        "id": "call_9",
        "name": "shell",
        "args": '{"command": "python -m unittest -v"}',
        "seq": 5,
        "outcome": "failed",
        "elapsedMs": 880,
    }
    assert "answer" in pair["differences"]


def test_diff_of_a_damaged_session_says_where_it_stopped_and_exits_4(tmp_path: Path) -> None:
    f = family(tmp_path)
    f.fork.write_bytes(f.fork.read_bytes()[:-20])
    proc = run_wren(["diff", str(f.parent), str(f.fork)], cwd=tmp_path)
    assert proc.returncode == 4
    assert "B: reading stopped at line 11 (byte" in proc.stdout and "torn tail" in proc.stdout
    assert proc.stderr == (
        f"wren: {f.fork}: line 11: the last line was cut short (no newline at its end); this torn tail is the "
        "normal end of a crash, and resuming the session sets it aside.\n"
    )


def test_diff_of_an_unknown_session_is_one_sentence(tmp_path: Path) -> None:
    f = family(tmp_path)
    proc = run_wren(["diff", SESSION, "s-20990101-000000-none", "--dir", str(f.folder)], cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr.startswith("wren: no session s-20990101-000000-none in ")
    assert "Traceback" not in proc.stderr


def test_diff_json_of_a_damaged_session_gives_where_it_stopped_in_its_parts_and_exits_4(tmp_path: Path) -> None:
    f = family(tmp_path)
    f.fork.write_bytes(f.fork.read_bytes()[:-20])
    proc = run_wren(["diff", str(f.parent), str(f.fork), "--json"], cwd=tmp_path)
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    document = json.loads(proc.stdout)
    assert document["left"]["stop"] is None
    stop = document["right"]["stop"]
    assert (stop["line"], stop["torn"]) == (11, True)
    assert stop["why"] == "the last line was cut short (no newline at its end)"
    assert list(stop) == ["line", "offset", "why", "torn"]  # as the dataclass it was wrote it

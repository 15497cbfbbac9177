"""`wren verify`: every kept copy and version checked against its sha256; a flipped byte is named (its path, its
version, what differs) with exit 4; what a kill leaves is no damage."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_wren
from tests.foreign.sessions import copy_session
from tests.keep.agents import ROOTS, every_agent, keep, keep_env
from wren_tui.keep import store


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_whole_store_verifies_and_a_flipped_byte_in_a_kept_copy_is_reported_with_exit_4(tmp_path: Path) -> None:
    home = tmp_path / "home"
    every_agent(home)
    keep(home)
    env = keep_env(home)
    whole = run_wren(["verify"], cwd=tmp_path, env=env)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    assert whole.stdout.strip().endswith("checked: whole")
    (kept,) = [k for k in store.kept_files("claude", env, home) if "0000-simple" in k.relative.name]
    _flip(kept.copy, 1000)
    damaged = run_wren(["verify"], cwd=tmp_path, env=env)
    assert damaged.returncode == 4
    said = f"{kept.copy}: version 1 of claude's {kept.relative}: its bytes do not match their checksum (sha256 recorded"
    assert said in damaged.stdout and damaged.stdout.strip().endswith("checked: 1 damaged")
    report = json.loads(run_wren(["verify", "--json"], cwd=tmp_path, env=env).stdout)
    assert report["whole"] is False and [d["file"] for d in report["damaged"]] == [kept.relative.as_posix()]


def test_a_flipped_byte_in_an_earlier_version_or_a_grown_range_and_a_damaged_manifest_line_are_reported(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    root = home / ROOTS["pi"]
    log = copy_session("pi", "simple", root, nested=True, stem="log")
    first = log.read_bytes()
    keep(home)
    log.write_bytes(first[: len(first) // 2])  # truncated: the longer copy becomes version 1
    keep(home)
    with open(log, "ab") as f:
        f.write(b'{"type":"message"}\n')
    keep(home)
    env = keep_env(home)
    old, new = store.kept_versions("pi", log.relative_to(root).as_posix(), env, home)
    _flip(old.copy, 10)
    _flip(new.copy, new.size - 3)  # in the bytes the last keep appended
    manifest = tmp_path / "kept" / "pi" / "manifest.jsonl"
    lines = manifest.read_bytes().splitlines(keepends=True)
    manifest.write_bytes(b"".join([*lines, lines[0].replace(b'"new"', b'"NEW"')]))
    done = run_wren(["verify"], cwd=tmp_path, env=env)
    assert done.returncode == 4
    assert f"{old.copy}: version 1 of pi's " in done.stdout
    appended = f"bytes {len(first) // 2:,} to {new.size - 1:,} do not match their checksum"
    assert f"{new.copy}: version 2 of pi's " in done.stdout and appended in done.stdout
    assert f"{manifest}: pi's manifest: line {len(lines) + 1}: its CRC does not match" in done.stdout


def test_what_a_kill_leaves_is_no_damage(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / ROOTS["claude"]
    log = copy_session("claude", "simple", root, nested=True, stem="log")
    keep(home)
    env = keep_env(home)
    (kept,) = store.kept_files("claude", env, home)
    with open(kept.copy, "ab") as f:  # appended, not yet recorded
        f.write(b'{"type":"user"}\n')
    manifest = tmp_path / "kept" / "claude" / "manifest.jsonl"
    with open(manifest, "ab") as f:  # a line cut short
        f.write(store.frame({"op": "gone", "rel": kept.relative.as_posix(), "at": "T"})[:30])
    (kept.copy.parent / (kept.copy.name + ".wren-part")).write_bytes(b"half a copy")
    done = run_wren(["verify"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout
    assert "its last line was cut short by a kill; it did not count" in done.stdout
    assert log.exists()


def test_a_rewrite_a_kill_cut_short_at_either_step_is_no_damage_and_the_next_keep_finishes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = home / ROOTS["codex"]
    log = copy_session("codex", "simple", root, nested=True, stem="log")
    first = log.read_bytes()
    keep(home)
    env = keep_env(home)
    (kept,) = store.kept_files("codex", env, home)
    linked = tmp_path / "kept" / "codex" / "versions" / "1" / kept.relative
    linked.parent.mkdir(parents=True)
    os.link(kept.copy, linked)  # killed after the version was linked, before the new copy took its place
    assert run_wren(["verify"], cwd=tmp_path, env=env).returncode == 0
    log.write_bytes(first[:100])
    keep(home)  # the link, a second name of the same file, is undone, then made again
    (kept,) = store.kept_files("codex", env, home)
    assert (kept.versions, kept.state, kept.copy.read_bytes()) == (2, "truncated", first[:100])
    # Killed after the new copy took its place, before its manifest line: the version counted is whole where it
    # was linked, and the next keep puts it back before it records the agent's file again.
    linked = tmp_path / "kept" / "codex" / "versions" / "2" / kept.relative
    linked.parent.mkdir(parents=True)
    os.link(kept.copy, linked)
    part = kept.copy.with_name(kept.copy.name + ".wren-part")
    part.write_bytes(b"the next copy, whole but not recorded\n")
    os.replace(part, kept.copy)
    done = run_wren(["verify"], cwd=tmp_path, env=env)
    assert (
        done.returncode == 0 and "a newer copy not yet recorded (a keep was stopped); version 2 is whole" in done.stdout
    )
    log.write_bytes(first)  # the agent's file grew from what version 2 counted: it grows again
    keep(home)
    versions = store.kept_versions("codex", kept.relative, env, home)
    assert [v.copy.read_bytes() for v in versions] == [first, first]
    assert run_wren(["verify"], cwd=tmp_path, env=env).stdout.strip().endswith("checked: whole")

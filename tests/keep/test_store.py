"""The kept store's read API: what `kept_files` and `kept_versions` say, from the manifest alone."""

from __future__ import annotations

import hashlib
from pathlib import Path, PurePosixPath

from wren_tui.keep import store


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _env(tmp_path: Path) -> dict[str, str]:
    return {"WREN_KEEP_DIR": str(tmp_path / "kept"), "CLAUDE_CONFIG_DIR": str(tmp_path / "claude")}


def test_the_root_is_the_variable_else_the_state_folder_else_the_home() -> None:
    home = Path("/home/u")
    assert store.kept_root({"WREN_KEEP_DIR": "/k"}, home) == Path("/k")
    assert store.kept_root({"XDG_STATE_HOME": "/s"}, home) == Path("/s/wren/kept")
    assert store.kept_root({"XDG_STATE_HOME": "relative"}, home) == Path("/home/u/.local/state/wren/kept")
    assert store.kept_folder("claude", {}, home) == Path("/home/u/.local/state/wren/kept/claude/files")


def test_kept_files_reads_the_manifest_and_a_torn_last_line_does_not_count(tmp_path: Path) -> None:
    env = _env(tmp_path)
    folder = store.agent_folder("claude", env, tmp_path)
    (folder / "files" / "p").mkdir(parents=True)
    (tmp_path / "claude" / "projects" / "p").mkdir(parents=True)
    (tmp_path / "claude" / "projects" / "p" / "a.jsonl").write_bytes(b"1\n2\n")  # b.jsonl's agent deleted it
    one, two = b"1\n", b"2\n"
    (folder / "files" / "p" / "a.jsonl").write_bytes(one + two)
    (folder / "files" / "p" / "b.jsonl").write_bytes(one)
    lines = [
        {"op": "copy", "rel": "p/a.jsonl", "v": 1, "size": 2, "sha256": _sha(one), "at": "T1", "src": [2, 5, 7]},
        {"op": "grow", "rel": "p/a.jsonl", "v": 1, "from": 2, "size": 4, "sha256": _sha(two), "at": "T2"},
        {"op": "copy", "rel": "p/b.jsonl", "v": 1, "size": 2, "sha256": _sha(one), "at": "T1"},
    ]
    data = b"".join(store.frame(r) for r in lines)
    torn = store.frame({"op": "gone", "rel": "p/a.jsonl", "at": "T3"})[:-1]  # no newline: a kill came
    (folder / "manifest.jsonl").write_bytes(data + torn)

    a, b = store.kept_files("claude", env, tmp_path)
    assert a.relative == PurePosixPath("p/a.jsonl") and a.copy == folder / "files" / "p" / "a.jsonl"
    assert (a.size, a.kept_at, a.state, a.changed_at, a.versions) == (4, "T2", "kept", None, 1)
    assert a.sha256 == hashlib.sha256(bytes.fromhex(_sha(one)) + bytes.fromhex(_sha(two))).hexdigest()
    # b.jsonl is gone from the agent's folder and no `wren keep` ran since: deleted, no time of it known.
    assert (b.size, b.sha256, b.state, b.changed_at) == (2, _sha(one), "deleted", None)
    assert b.original == tmp_path / "claude" / "projects" / "p" / "b.jsonl"
    manifest = store.read_manifest(folder)
    assert manifest.torn and manifest.damaged == [] and manifest.size == len(data)


def test_a_rewritten_file_has_its_versions_and_a_damaged_line_is_left_out(tmp_path: Path) -> None:
    env = _env(tmp_path)
    folder = store.agent_folder("claude", env, tmp_path)
    first, second = b'{"a":1}', b'{"a":2}'
    lines = [
        {"op": "copy", "rel": "s.jsonl", "v": 1, "size": 7, "sha256": _sha(first), "at": "T1"},
        {"op": "copy", "rel": "s.jsonl", "v": 2, "size": 7, "sha256": _sha(second), "at": "T2", "why": "rewritten"},
        {"op": "gone", "rel": "s.jsonl", "at": "T3"},
    ]
    framed = [store.frame(r) for r in lines]
    framed.insert(1, framed[0].replace(b'"T1"', b'"T9"'))  # its CRC no longer matches
    folder.mkdir(parents=True)
    (folder / "manifest.jsonl").write_bytes(b"".join(framed))
    (kept,) = store.kept_files("claude", env, tmp_path)
    assert (kept.state, kept.changed_at, kept.versions, kept.sha256) == ("deleted", "T3", 2, _sha(second))
    v1, v2 = store.kept_versions("claude", "s.jsonl", env, tmp_path)
    assert (v1.number, v1.copy, v1.sha256, v1.why) == (1, folder / "versions" / "1" / "s.jsonl", _sha(first), "new")
    assert (v2.number, v2.copy, v2.why) == (2, folder / "files" / "s.jsonl", "rewritten")
    (damaged,) = store.read_manifest(folder).damaged
    assert damaged == (2, "its CRC does not match its bytes, or it is not a manifest record")
    assert store.kept_agents(env, tmp_path) == ["claude"]

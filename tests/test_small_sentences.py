"""Small things said right: an empty --host, a port out of range, the tunnel hint for the address served, a damaged
foreign file's advice, and the line and paragraph separators shown rather than obeyed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_wren
from tests.tui.test_served import _env, _free_port, _wait_for_line
from wren_tui.journal.visible import visible, visible_text

AGENTS = Path(__file__).parent / "fixtures" / "agents"


def test_mirror_refuses_an_empty_host_instead_of_taking_the_machine_s_name(tmp_path: Path) -> None:
    (tmp_path / "journals").mkdir()
    argv = ["mirror", "--url", "nats://127.0.0.1:1", "--host", "", "--once", "--dir", str(tmp_path / "journals")]
    proc = run_wren(argv, cwd=tmp_path, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.startswith("wren: '' is not a host token: use lowercase letters, digits, - and _")


def test_a_fleet_port_out_of_range_says_the_range(tmp_path: Path) -> None:
    for argv in (["ls", "nats://127.0.0.1:99999"], ["log", "nats://127.0.0.1:70000/vm/s-20260101-000000-abcd"]):
        proc = run_wren(argv, cwd=tmp_path, timeout=60)
        assert proc.returncode == 1 and "the port must be a number from 1 to 65535" in proc.stderr
        assert "not a number" not in proc.stderr


def test_the_tunnel_hint_names_the_loopback_address_served(tmp_path: Path) -> None:
    folder = tmp_path / "journals"
    folder.mkdir()
    port = _free_port()
    argv = ["watch", "--serve", "--host", "127.0.0.2", "--port", str(port), "--dir", str(folder)]
    server = subprocess.Popen(
        [sys.executable, "-m", "wren_tui", *argv],
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        said = _wait_for_line(server, "viewers at once")
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
    assert f"serving the viewer at http://127.0.0.2:{port}/?token=" in said
    assert f"ssh -L {port}:127.0.0.2:{port} THIS-HOST, then open http://127.0.0.1:{port}/?token=" in said


def test_a_damaged_foreign_file_is_not_told_to_be_read_with_the_command_that_read_it(tmp_path: Path) -> None:
    good = (AGENTS / "claude-code" / "simple.jsonl").read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(b"".join([*good[:5], b"{oops\n", *good[5:]]))
    proc = run_wren(["log", str(damaged)], cwd=tmp_path, timeout=60)
    assert proc.returncode == 4
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"wren: {damaged}: line 6: it is not JSON. Nothing after it is read")
    assert f"(`wren fork {damaged}` lists them)" in last
    assert "Nothing was written" not in proc.stderr and "Read it with" not in proc.stderr


def test_line_and_paragraph_separators_are_shown_not_obeyed() -> None:
    assert visible("a\u2028b\u2029c") == "a<U+2028>b<U+2029>c"
    assert visible_text("one\u2028two\nthree") == "one<U+2028>two\nthree"

"""A malformed nats:// reference is one sentence and exit 1 for every command that takes one, never a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_wren

MALFORMED = [
    ("nats://[::1", "Invalid IPv6 URL"),
    ("nats://[::1/vm", "Invalid IPv6 URL"),
    ("nats://user:pw@[::1/vm/s-20261201-000000-abcd", "Invalid IPv6 URL"),
    ("nats://[zz]/vm", "'zz' does not appear to be an IPv4 or IPv6 address"),
    ("nats://[not-an-address]", "does not appear to be an IPv4 or IPv6 address"),
]


def _refused(result: subprocess.CompletedProcess[str], url: str, why: str) -> None:
    stderr = result.stderr
    assert result.returncode == 1, stderr
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr
    shown = url.replace(":pw@", ":***@")  # a password is never printed
    assert stderr.startswith(f"wren: {shown!r} is not a fleet reference (") and why in stderr


@pytest.mark.parametrize(("url", "why"), MALFORMED)
@pytest.mark.parametrize("command", [["ls"], ["log"], ["watch"], ["log", "--json"], ["ls", "--json"]])
def test_a_malformed_reference_is_one_sentence(tmp_path: Path, command: list[str], url: str, why: str) -> None:
    _refused(run_wren([*command, url], cwd=tmp_path, timeout=60), url, why)


@pytest.mark.parametrize(("url", "why"), MALFORMED[:2] + MALFORMED[3:4])
def test_mirror_says_the_same_for_its_url_and_for_the_variable(tmp_path: Path, url: str, why: str) -> None:
    (tmp_path / "j").mkdir()
    given = run_wren(["mirror", "--dir", "j", "--once", "--url", url], cwd=tmp_path, timeout=60)
    _refused(given, url, why)
    from_env = run_wren(["mirror", "--dir", "j", "--once"], cwd=tmp_path, env={"WREN_NATS_URL": url}, timeout=60)
    _refused(from_env, url, why)


@pytest.mark.parametrize("command", [["ls"], ["log", "--json"]])
def test_port_0_is_refused_as_a_bad_port_before_any_connection(tmp_path: Path, command: list[str]) -> None:
    result = run_wren([*command, "nats://127.0.0.1:0/ci"], cwd=tmp_path, timeout=60)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "the port must be a number from 1 to 65535" in result.stderr


def test_a_server_name_that_does_not_resolve_is_said_as_such(tmp_path: Path) -> None:
    # .invalid never resolves (RFC 6761), with or without a network.
    result = run_wren(["ls", "nats://nosuch.invalid:4222/ci"], cwd=tmp_path, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "cannot reach nats://nosuch.invalid:4222 (cannot resolve nosuch.invalid: " in result.stderr
    assert "unknown error" not in result.stderr
    (tmp_path / "j").mkdir()
    mirror = run_wren(["mirror", "--dir", "j", "--once", "--url", "nats://nosuch.invalid"], cwd=tmp_path, timeout=60)
    assert mirror.returncode == 1 and "cannot resolve nosuch.invalid: " in mirror.stderr, mirror.stderr

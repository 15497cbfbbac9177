"""Another agent's session holding keys (in a prompt, a command, a result, an environment *_TOKEN value) is
redacted wherever Wren writes it, as Wren's own journal is: a fork's journal (and so every request of a
resumed run), an ATIF export, OTel spans with --content, and the search index and its hits. Reading the
file itself (the fork's list of points, `wren log`) shows it as it is: the file is the person's own."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.openai_server import Answer, OpenAIServer, reply_stream
from tests.conftest import run_wren
from tests.foreign.sessions import age, fixture
from wren_tui.journal.redact import MARK

ANT = "sk-ant-api03-Q2VjcmV0S2V5Rm9yV3Jlbl9UZXN0c19Pbmx5XzEyMzQ1"
GHP = "ghp_R3JlYXRTZWNyZXRGb3JXcmVuVGVzdHMxMjM0NTY3"
AWS = "AKIAWRENTESTKEY12345"
TOKEN_VALUE = "tok-9f8e7d6c5b4a39281706"  # no key shape: secret only as the value of an env *_TOKEN
ENV = {"WREN_TEST_DEPLOY_TOKEN": TOKEN_VALUE}
SECRETS = (ANT, GHP, AWS, TOKEN_VALUE)
RECORDED_CWD = b"/var/tmp/wren-claude-code-multi-turn-4yawf81l/ws"
LAST_ANSWER = 39  # "hello.py has 3 lines.": after the command and its result


def session_with_keys(tmp_path: Path, workspace: Path) -> Path:
    """Claude Code's multi-turn recording with a key in the prompt, the command, and the results."""
    data = fixture("claude", "multi-turn").read_bytes()
    for old, new in [
        (b"What does notes.txt say?", f"What does notes.txt say? My key is {ANT}".encode()),
        (b"wc -l hello.py", f"GITHUB_TOKEN={GHP} wc -l hello.py".encode()),
        (b"- buy milk", f"- buy milk {AWS}".encode()),
        (b"3 hello.py", f"3 hello.py {TOKEN_VALUE}".encode()),
        (RECORDED_CWD, str(workspace).encode()),
    ]:
        assert old in data
        data = data.replace(old, new)
    folder = tmp_path / "claude-sessions"
    folder.mkdir()
    session = folder / "7902af8d-44b5-48aa-9f1d-95450ef9ca38.jsonl"
    session.write_bytes(data)
    age(session, 3600)
    return session


def no_secret_in(text: str | bytes, where: str) -> None:
    data = text.encode() if isinstance(text, str) else text
    found = [s for s in SECRETS if s.encode() in data]
    assert not found, f"{where} holds {found}"


async def wren(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("WREN_")} | ENV | env
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "wren_tui", *args, cwd=cwd, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return subprocess.CompletedProcess(args, proc.returncode, out.decode(), err.decode())


async def test_a_fork_of_a_session_holding_keys_journals_none_and_its_resumed_run_sends_none(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = session_with_keys(tmp_path, workspace)
    journals = tmp_path / "journals"

    def answer(body: dict[str, Any], headers: dict[str, str]) -> Answer:
        return reply_stream("It has three lines.")

    async with OpenAIServer(answer) as server:
        env = {"WREN_BASE_URL": server.base_url, "WREN_API_KEY": "not-a-real-key-0000"}
        listed = await wren(["fork", str(session), "--dir", str(journals)], tmp_path, env)
        assert listed.returncode == 0, listed.stderr
        made = await wren(["fork", str(session), str(LAST_ANSWER), "--dir", str(journals), "--json"], tmp_path, env)
        assert made.returncode == 0, made.stderr
        forked = json.loads(made.stdout)
        journal = Path(forked["path"])
        no_secret_in(journal.read_bytes(), "the fork's journal")
        # Each was there, and is now the mark: the prompt, the command, both results.
        assert journal.read_bytes().count(MARK.encode()) >= 4
        resumed = await wren(
            ["resume", forked["id"], "how many lines again?", "--dir", str(journals), "--model", "openai", "--yes"],
            tmp_path,
            env,
        )
        assert resumed.returncode == 0, resumed.stderr
        assert server.requests, "the resumed run asked the model nothing"
    for number, request in enumerate(server.requests):
        no_secret_in(json.dumps(request, ensure_ascii=False), f"request {number}")
    assert MARK in json.dumps(server.requests[0])
    no_secret_in(journal.read_bytes(), "the journal after the resumed run")
    no_secret_in(resumed.stdout + resumed.stderr, "the resumed run's output")


def test_an_atif_export_of_a_session_holding_keys_holds_none(tmp_path: Path) -> None:
    session = session_with_keys(tmp_path, tmp_path)
    out = tmp_path / "out.atif.json"
    done = run_wren(["export", str(session), "--format", "atif", "-o", str(out)], cwd=tmp_path, env=ENV)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    no_secret_in(text, "the ATIF export")
    assert MARK in text and "hello.py has 3 lines." in text


def test_otel_spans_of_a_session_holding_keys_hold_none_even_with_content(tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="wren otel needs the otel extra (pip install -e '.[otel]')")
    from tests.otel.collector import running_collector

    session = session_with_keys(tmp_path, tmp_path)
    with running_collector() as collector:
        done = run_wren(["otel", str(session), "--endpoint", collector.url, "--content"], cwd=tmp_path, env=ENV)
        assert done.returncode == 0, done.stderr
        sent = b"".join(span.SerializeToString() for span in collector.spans)
    assert collector.named("execute_tool Bash")
    no_secret_in(sent, "the spans")
    assert MARK.encode() in sent


@pytest.mark.parametrize("index", [True, False], ids=["index", "no-index"])
def test_the_search_of_a_session_holding_keys_finds_and_keeps_none(tmp_path: Path, index: bool) -> None:
    session = session_with_keys(tmp_path, tmp_path)
    state = tmp_path / "state"
    env = {**ENV, "XDG_STATE_HOME": str(state)}
    flags = ["--agent", "claude", "--dir", str(session.parent), "--json", *([] if index else ["--no-index"])]
    hit = run_wren(["search", "buy milk", *flags], cwd=tmp_path, env=env)
    assert hit.returncode == 0, hit.stderr
    no_secret_in(hit.stdout, "the hit")
    assert MARK in hit.stdout
    for secret in SECRETS:
        missed = run_wren(["search", secret, *flags], cwd=tmp_path, env=env)
        assert missed.returncode == 1, (secret, missed.stdout, missed.stderr)
        no_secret_in(missed.stdout, "a search for a key")
    # Every file Wren kept (the index, beside the sessions or in the state folder), the session itself aside.
    kept = [p for p in tmp_path.rglob("*") if p.is_file() and p != session]
    assert any(p.name.startswith("search.sqlite") for p in kept) == index
    for path in kept:
        no_secret_in(path.read_bytes(), str(path))


@pytest.mark.parametrize("index", [True, False], ids=["index", "no-index"])
def test_a_search_for_the_mark_finds_a_key_redacted_in_a_session_whose_file_never_says_it(
    tmp_path: Path, index: bool
) -> None:
    """Codex's files are skimmed for a word of the query before they are read; the mark is in no file, only
    in the texts made from one holding a key, so the skim must not pass such a file over."""
    data = fixture("codex", "multi-turn").read_bytes()
    assert b"redacted" not in data
    folder = tmp_path / "codex-sessions"
    folder.mkdir()
    session = folder / "rollout-2026-11-30T09-02-58-0000-multi-turn.jsonl"
    session.write_bytes(data.replace(b"What does notes.txt say?", f"What does notes.txt say? key {GHP}".encode()))
    age(session, 3600)
    flags = ["--agent", "codex", "--dir", str(folder), "--json", *([] if index else ["--no-index"])]
    found = run_wren(["search", "redacted", *flags], cwd=tmp_path, env=ENV)
    assert found.returncode == 0, (found.stdout, found.stderr)
    hits = [json.loads(line) for line in found.stdout.splitlines()]
    assert hits and all(MARK in json.dumps(hit) for hit in hits if hit.get("type") == "hit")
    no_secret_in(found.stdout, "the hits")

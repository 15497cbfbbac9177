"""Secrets that are hard to redact: one inside another, and one split across two pieces of a streamed reply.

The journal gets the reply twice: as `delta` events while it streams (each redacted on its own) and as
the whole message at the end. A secret must not reach either, however the stream is cut.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.agent.conftest import events_of, journals_of, only_journal
from tests.agent.listed_model import ListedModel
from tests.reliability.dial import scaled
from wren_tui.agent.errors import Ended
from wren_tui.agent.loop import DELTA_MAX_CHARS, Printer
from wren_tui.agent.models import MODELS
from wren_tui.agent.models.base import FinishPart, Gateway, ModelSetup, TextPart
from wren_tui.agent.session import Settings, run_task
from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import Delta, Message
from wren_tui.journal.redact import MARK, Redactor

# A key of a known shape (redacted whether or not it is in the environment), and an environment value.
KEY = "sk-proj-" + "Q7w" * 12
ENV_SECRET = "tok_" + "Zx9" * 9
SPACED_SECRET = "correct horse battery staple 42"
ALNUM = string.ascii_letters + string.digits


def fragments(secret: str, size: int = 6) -> set[str]:
    return {secret[i : i + size] for i in range(len(secret) - size + 1)}


def leaked(text: str, secret: str) -> set[str]:
    return {piece for piece in fragments(secret) if piece in text}


# --- one secret inside another: the longest is removed whole -----------------------------------------------


def test_a_secret_that_contains_another_is_removed_whole_not_around_the_shorter_one() -> None:
    redactor = Redactor({"A_KEY": "abcdefgh", "B_TOKEN": "abcdefgh-longer-secret", "C_SECRET": "longer-secret-xyz"})
    assert redactor.clean("x abcdefgh-longer-secret y") == f"x {MARK} y"
    assert redactor.clean("x abcdefgh z") == f"x {MARK} z"
    # The shorter one listed first in the environment changes nothing.
    assert Redactor({"B_TOKEN": "abcdefgh-longer-secret", "A_KEY": "abcdefgh"}).clean("abcdefgh-longer-secret") == MARK


@settings(max_examples=scaled(25, 500), deadline=None)
@given(
    inner=st.text(ALNUM, min_size=8, max_size=16),
    before=st.text(ALNUM + "-_", min_size=1, max_size=12),
    after=st.text(ALNUM + "-_", min_size=1, max_size=12),
    inner_first=st.booleans(),
)
def test_any_secret_inside_another_never_leaves_a_piece_of_the_outer_one(
    inner: str, before: str, after: str, inner_first: bool
) -> None:
    outer = before + inner + after
    env = {"INNER_KEY": inner, "OUTER_TOKEN": outer}
    redactor = Redactor(dict(reversed(env.items())) if inner_first else env)
    assert redactor.clean(f"say {outer} now") == f"say {MARK} now"


async def test_nested_secrets_in_a_run_reach_neither_the_journal_nor_the_terminal(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner, outer = "abcdefgh", "abcdefgh-longer-secret"
    monkeypatch.setenv("A_KEY", inner)
    monkeypatch.setenv("B_TOKEN", outer)
    journal, shown = await _run(workspace, monkeypatch, [f"the token is {outer}, keep it"])
    data = journal.read_bytes()
    assert b"longer-secret" not in data and inner.encode() not in data
    assert "longer-secret" not in shown


# --- a secret split across the pieces of a stream ---------------------------------------------------------


async def _run(workspace: Path, monkeypatch: pytest.MonkeyPatch, pieces: list[str]) -> tuple[Path, str]:
    model = ListedModel([[*(TextPart(p) for p in pieces), FinishPart("stop")]])

    def listed(setup: ModelSetup) -> Gateway:
        return model

    monkeypatch.setitem(MODELS, "listed", listed)
    out = io.StringIO()
    settings_ = Settings(workspace=workspace, folder=journals_of(workspace), printer=Printer(out), model="listed")
    assert await run_task(settings_, "say it", None) == Ended()
    return only_journal(journals_of(workspace)), out.getvalue()


def _check(journal: Path, secrets: list[str]) -> None:
    events = events_of(journal)
    deltas = [e.text for e in events if isinstance(e, Delta)]
    reply = next(e.message.content for e in events if isinstance(e, Message) and e.message.role == "assistant")
    assert deltas, "the stream sent no delta: nothing was tested"
    for secret in secrets:
        for number, text in enumerate(deltas):
            assert not leaked(text, secret), f"delta {number} holds a piece of a secret: {text!r}"
        assert not leaked(reply, secret), reply
    # The deltas add up to the reply: what was held back was sent, redacted, not lost.
    assert reply.startswith("".join(deltas))


# The first piece is long enough for the stream to send a delta at once (DELTA_MAX_CHARS), with no space to cut at.
FILL = "x" * DELTA_MAX_CHARS


@pytest.mark.parametrize(
    ("env", "pieces", "secrets"),
    [
        pytest.param(
            {}, [FILL + "=" + KEY[:12], KEY[12:] + " and more"], [KEY], id="a key's first characters end the piece"
        ),
        pytest.param(
            {"DEPLOY_TOKEN": ENV_SECRET},
            [FILL + "=" + ENV_SECRET[:10], ENV_SECRET[10:] + " and more"],
            [ENV_SECRET],
            id="an environment secret's first characters end the piece",
        ),
        pytest.param(
            {"DEPLOY_TOKEN": ENV_SECRET},
            # The whole secret is in the piece, across the place a delta would be cut (64 characters from the end).
            [FILL + "=" + ENV_SECRET + "=" + "y" * 50, "and more"],
            [ENV_SECRET],
            id="a whole secret across the cut",
        ),
        pytest.param(
            {"PASS_PHRASE_SECRET": SPACED_SECRET},
            [FILL + " " + SPACED_SECRET[:17], SPACED_SECRET[17:] + " and more"],
            [SPACED_SECRET],
            id="a secret with spaces split after one",
        ),
    ],
)
async def test_a_secret_split_across_two_pieces_of_a_stream_reaches_no_delta(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], pieces: list[str], secrets: list[str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    journal, shown = await _run(workspace, monkeypatch, pieces)
    _check(journal, secrets)
    _check_shown(journal, shown, secrets)


def _check_shown(journal: Path, shown: str, secrets: list[str]) -> None:
    """The terminal shows the reply as the journal keeps it: whole, redacted, with no piece of a secret."""
    reply = next(
        e.message.content for e in events_of(journal) if isinstance(e, Message) and e.message.role == "assistant"
    )
    for secret in secrets:
        assert not leaked(shown, secret), f"the terminal showed a piece of a secret: {shown!r}"
    assert reply in shown, (reply, shown)


@settings(max_examples=scaled(12, 300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    lead=st.text("xy.,=-", min_size=0, max_size=2 * DELTA_MAX_CHARS),
    which=st.sampled_from([KEY, ENV_SECRET, SPACED_SECRET]),
    tail=st.text("xy .=", max_size=120),
    cuts=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_however_a_stream_with_a_secret_is_cut_no_delta_holds_a_piece_of_it(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    lead: str,
    which: str,
    tail: str,
    cuts: list[int],
) -> None:
    text = lead + "=" + which + "=" + tail + " end"
    points = sorted({c % len(text) for c in cuts} | {0, len(text)})
    pieces = [text[a:b] for a, b in itertools.pairwise(points) if b > a]
    workspace = prepare_workspace(tmp_path_factory.mktemp("split") / "ws")
    with monkeypatch.context() as patch:
        patch.setenv("DEPLOY_TOKEN", ENV_SECRET)
        patch.setenv("PASS_PHRASE_SECRET", SPACED_SECRET)
        journal, shown = asyncio.run(_run(workspace, patch, pieces))
    _check_shown(journal, shown, [which])
    events = events_of(journal)
    for text_ in (e.text for e in events if isinstance(e, Delta)):
        assert not leaked(text_, which), text_
    reply = next(e.message.content for e in events if isinstance(e, Message) and e.message.role == "assistant")
    assert not leaked(reply, which) and MARK in reply

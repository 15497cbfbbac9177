"""What the model is told about a tool call that did not end normally: four prefixes, each one true.

`not run:` means the call never started, so nothing happened. The other three are for calls that
did start: the model must not read them as "nothing happened". The system prompt explains each, the
loop and resume write them, and the scripted model reads them, all from this one place.
"""

from __future__ import annotations

from ..journal.events import ToolEnd

NOT_RUN = "not run:"
INTERRUPTED = "interrupted:"
OUTCOME_UNKNOWN = "outcome unknown:"
OUTPUT_LOST = "output lost:"

# The four prefixes and what each means, in the words of the system prompt.
MEANINGS: dict[str, str] = {
    NOT_RUN: "it never started (denied, repeated, over the limit, no such tool, or the turn was stopped first): "
    "nothing happened; do not retry it blindly",
    INTERRUPTED: "it started and was stopped before it finished: it may have done part of its work",
    OUTCOME_UNKNOWN: "Wren stopped while it ran and nothing recorded how it ended: it may have done none, some "
    "or all of its work",
    OUTPUT_LOST: "it ended (the result says how) but what it printed never reached the journal",
}


def prompt_guide() -> str:
    """The system prompt's paragraph on the prefixes."""
    meanings = " ".join(f"'{prefix}' means {meaning}." for prefix, meaning in MEANINGS.items())
    return (
        f"Some tool results start with a prefix that says the call did not end normally. {meanings} "
        f"After '{INTERRUPTED}', '{OUTCOME_UNKNOWN}' or '{OUTPUT_LOST}', check the workspace before doing "
        "the same thing again."
    )


def did_not_finish(text: str) -> bool:
    """A result of a call that started but whose outcome the model cannot read from it."""
    return text.startswith((INTERRUPTED, OUTCOME_UNKNOWN, OUTPUT_LOST))


# --- not run -------------------------------------------------------------------------------------


def denied(reason: str) -> str:
    return f"{NOT_RUN} denied: {reason}"


def stopped_before_start(cause: str | None) -> str:
    """A call the turn never reached: the turn was stopped (by `cause`, when known) first."""
    by = f" by {cause}" if cause else ""
    return f"{NOT_RUN} the turn was stopped{by} before this call started"


def repeated(count: int, name: str) -> str:
    return (
        f"{NOT_RUN} this is call number {count} in a row of {name} with the same arguments in this turn; "
        "the result would not change. Try something different, or stop and report"
    )


def no_such_tool(name: str, tools: list[str]) -> str:
    return f"{NOT_RUN} there is no tool named {name!r}; the tools are: {', '.join(tools)}"


def unholdable_text(name: str) -> str:
    return (
        f"{NOT_RUN} the arguments of {name} hold a lone surrogate (half of a UTF-16 pair, such as \\ud800), which "
        "no file name, file or command can hold; send the call again with the text whole"
    )


def over_limit(max_calls: int) -> str:
    return f"{NOT_RUN} more than {max_calls} tool calls in one reply; ask for fewer"


# --- started, and did not end normally ------------------------------------------------------------


def interrupted(elapsed_ms: int, cause: str | None) -> str:
    by = f" by {cause}" if cause else ""
    return (
        f"{INTERRUPTED} it ran for {elapsed_ms} ms and was stopped{by} before it finished; it may have done "
        "part of its work, so check before doing it again"
    )


def outcome_unknown(started_at: str) -> str:
    return (
        f"{OUTCOME_UNKNOWN} Wren stopped after this call started (at {started_at}) and before it recorded "
        "how it ended. It may have done none, some or all of its work: check the workspace before doing it again"
    )


def output_lost(started_at: str, how: str) -> str:
    """`how` says how it ended, e.g. "it ended ok after 2 ms, but 40 chars of output never reached the journal"."""
    return (
        f"{OUTPUT_LOST} this call started at {started_at} and {how}. Do not count on what it printed; check the "
        "workspace before doing it again"
    )


def interrupted_and_lost(started_at: str, how: str) -> str:
    """A call stopped by a cancel whose tool message was then lost as well."""
    return (
        f"{INTERRUPTED} this call started at {started_at} and {how}. It may have done part of its work, so "
        "check before doing it again"
    )


def ended_but_lost(end: ToolEnd) -> str:
    """What a tool_end with no tool message after it says: how the call ended, and that its output is lost."""
    how = "it ended ok" if end.ok else ("it failed" if end.ok is False else "it ended")
    if end.stopped_by:
        how += f" (stopped by {end.stopped_by})"
    if end.elapsed_ms is not None:
        how += f" after {end.elapsed_ms} ms"
    size = f"{end.chars} chars of output" if end.chars is not None else "its output"
    return f"{how}, but {size} never reached the journal"


# --- why a turn was stopped ----------------------------------------------------------------------

SIGNAL_CAUSES: dict[str, str] = {
    "SIGINT": "SIGINT (Ctrl+C)",
    "SIGTERM": "SIGTERM (Wren was told to stop)",
    "SIGHUP": "SIGHUP (the terminal was closed)",
}


def snapshot_failed(why: str) -> str:
    """A call that did not run because the workspace could not be snapshotted before it."""
    return f"{NOT_RUN} the workspace could not be snapshotted before it ({why}), so it was not run"

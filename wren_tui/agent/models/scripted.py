"""The `scripted` model: offline, and it works from what it reads.

It decides each reply from the conversation alone (so a resumed session continues where the journal
left it): run the tests, read the failing case out of the runner's real output, read the test and
the code the traceback names, derive an edit from both, rerun, report. Asked about an earlier turn, it
answers from the replayed messages without calling a tool.
"""

from __future__ import annotations

import ast
import asyncio
import hashlib
import importlib.util
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...journal.events import SUMMARY_MARK, ChatMessage, ToolCall
from ..context import COMPACT_MARK
from ..injection import INSTRUCTIONS_MARK, given_blocks, typed_part
from ..outcomes import INTERRUPTED, NOT_RUN, OUTCOME_UNKNOWN, OUTPUT_LOST
from ..tools import Tool
from ..workspace import python_command
from .base import FinishPart, ModelSetup, StreamPart, TextPart, ToolCallPart, UsagePart
from .testreport import Failure, Frame, TestReport, parse_test_output

_BACKQUOTED = re.compile(r"`([^`]+)`")
_QUESTION_START = re.compile(r"^\s*(what|which|why|how|who|when|where|did|do|does|was|were|is|are|can)\b", re.I)
_FIX = re.compile(r"\b(fix|repair|correct|make (?:it|them|the tests?) pass)\b", re.I)
_TESTS = re.compile(r"\b(tests?|failing|fails?|failure)\b", re.I)
_RUN = re.compile(r"\b(run|rerun|check|execute)\b", re.I)
_LIST = re.compile(r"\b(list|show)\b.*\bfiles?\b|\bwhat files\b", re.I)
_READ_EACH = re.compile(r"\bread (each|every|all)\b", re.I)
_FILES_READ = re.compile(r"^Files read: (\[.*\])$", re.M)
_SUMMARY_READS = 200
_MAX_EDITS = 3
_SUMMARY_REQUESTS = 30
_SUMMARIZED = re.compile(r"^Request \d+: ('.*'|\".*\")$", re.M)
# At pace 1.0 a step takes two or three seconds, like a real model: think, stream, then ask for a tool.
_THINK_S, _PIECE_S, _CALL_S = 1.0, 0.08, 0.4


@dataclass(frozen=True)
class Step:
    """A tool call of this turn and what came back (None while it has no result)."""

    call: ToolCall
    result: str | None

    @property
    def args(self) -> dict[str, object]:
        try:
            value = json.loads(self.call.args or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def refused(self) -> bool:
        """It never started (or has no result yet)."""
        return self.result is None or self.result.startswith(NOT_RUN)

    @property
    def interrupted(self) -> bool:
        """It started and was stopped before it finished."""
        return self.result is not None and self.result.startswith(INTERRUPTED)

    @property
    def unknown(self) -> bool:
        """Settled on resume with --assume-failed: it may or may not have happened, or what it printed is lost."""
        return self.result is not None and self.result.startswith((OUTCOME_UNKNOWN, OUTPUT_LOST))

    @property
    def finished(self) -> bool:
        """It ran to its end and its output is here to read."""
        return not (self.refused or self.interrupted or self.unknown)


@dataclass
class Decision:
    text: str
    calls: list[tuple[str, dict[str, object]]] = field(default_factory=list)


@dataclass(frozen=True)
class Fix:
    path: str
    old: str
    new: str
    why: str


def create(setup: ModelSetup) -> ScriptedModel:
    """The gateway the registry makes for `--model scripted`: it needs the workspace and the pace, nothing else."""
    return ScriptedModel(setup.workspace, pace=setup.pace)


class ScriptedModel:
    """A Gateway that needs no network: it reacts to the conversation and the tool output in it."""

    def __init__(self, workspace: Path, *, pace: float = 0.0) -> None:
        self._root = workspace.resolve()
        self._pace = pace

    @property
    def model(self) -> str:
        return "scripted"

    async def stream(self, messages: Sequence[ChatMessage], tools: Sequence[Tool]) -> AsyncIterator[StreamPart]:
        decision = decide(messages, self._root)
        if self._pace:
            await asyncio.sleep(_THINK_S * self._pace)
        for piece in _pieces(decision.text):
            yield TextPart(piece)
            if self._pace:
                await asyncio.sleep(_PIECE_S * self._pace)
        # After a compaction the conversation's length repeats: the ids then name the last summary too.
        summaries = [m.content for m in messages if _is_summary(m)]
        tail = f"_{hashlib.sha256(summaries[-1].encode()).hexdigest()[:8]}" if summaries else ""
        for index, (name, args) in enumerate(decision.calls):
            if self._pace:
                await asyncio.sleep(_CALL_S * self._pace)
            yield ToolCallPart(index=index, id=f"call_{len(messages)}_{index}{tail}", name=name, args=json.dumps(args))
        read = sum(len(m.content) + sum(len(c.args) for c in m.tool_calls or ()) for m in messages)
        wrote = len(decision.text) + sum(len(json.dumps(a)) for _, a in decision.calls)
        # No tokenizer offline: about four characters per token, as the usage a real model would report.
        yield UsagePart(read // 4 + 1, wrote // 4 + 1)
        yield FinishPart("tool_calls" if decision.calls else "stop")


def _pieces(text: str) -> list[str]:
    words = re.findall(r"\S+\s*|\s+", text)
    return ["".join(words[i : i + 3]) for i in range(0, len(words), 3)]


# --- deciding a reply ---------------------------------------------------------------------------


def decide(messages: Sequence[ChatMessage], root: Path) -> Decision:
    if messages and messages[-1].role == "user" and messages[-1].content.startswith(COMPACT_MARK):
        return Decision(summarize(messages[:-1]))
    last_user = max((i for i, m in enumerate(messages) if _is_request(m)), default=-1)
    last_summary = max((i for i, m in enumerate(messages) if _is_summary(m)), default=-1)
    if last_summary > last_user and _requests(messages[last_summary : last_summary + 1]):
        # The turn in progress was compacted inside it: its request and what it did are in the summary.
        task, given = _requests(messages[last_summary : last_summary + 1])[-1], []
        history, turn = messages[:last_summary], messages[last_summary + 1 :]
    elif last_user < 0:
        return Decision("There is no request from you yet; tell me what to do.")
    else:
        # What was typed decides; the files its `@` references gave are read below, not taken as the request.
        task = typed_part(messages[last_user].content)
        given = given_blocks(messages[last_user].content)
        history, turn = messages[:last_user], messages[last_user + 1 :]
    steps = _steps(turn)
    if steps and steps[-1].refused:
        return _report_refusal(steps[-1])
    if steps and steps[-1].interrupted:
        return _report_interrupted(steps[-1])
    command = _BACKQUOTED.search(task)
    if command and _RUN.search(task) and not _FIX.search(task):
        return _run_given(command.group(1), steps, root)
    if _FIX.search(task):
        return _work(steps, root, fix=True)
    if given and not _TESTS.search(task):
        return Decision(_read_given(given))
    if _is_question(task):
        answer = answer_from_history(task, history, root)
        if answer is not None:
            return Decision(answer)
    if _TESTS.search(task):
        return _work(steps, root, fix=False)
    if _READ_EACH.search(task):
        summarized = _files_read(messages[last_summary : last_summary + 1]) if last_summary > last_user else []
        return _read_each(summarized + [str(s.args.get("path", "")) for s in steps if s.call.name == "read_file"], root)
    if _LIST.search(task):
        if not steps:
            return Decision("Let me look at the workspace.", [("list_dir", {"path": "."})])
        return Decision(f"The workspace holds:\n{steps[-1].result}")
    return Decision(
        "I am the offline scripted model: I can run the tests and name the failing case, fix a failing "
        "case I can read from the traceback, run a command you give in backquotes, and answer questions "
        "about earlier turns. Set WREN_API_KEY (and WREN_BASE_URL, WREN_MODEL) to talk to a real model."
    )


def _is_request(message: ChatMessage) -> bool:
    """A user's message: not the project's instructions, not a compaction's summary or its request."""
    return message.role == "user" and not message.content.startswith((INSTRUCTIONS_MARK, SUMMARY_MARK, COMPACT_MARK))


def _is_summary(message: ChatMessage) -> bool:
    return message.role == "user" and message.content.startswith(SUMMARY_MARK)


def _files_read(messages: Sequence[ChatMessage]) -> list[str]:
    """The files read_file read: those an earlier summary names (`Files read: [...]`), then the calls'."""
    read: list[str] = []
    for m in messages:
        if _is_summary(m):
            for found in _FILES_READ.findall(m.content):
                read.extend(str(name) for name in json.loads(found))
        for call in m.tool_calls or ():
            if call.name == "read_file":
                read.append(str(Step(call, None).args.get("path", "")))
    return read


def _read_each(read: list[str], root: Path) -> Decision:
    """Read the workspace's files one a step, in name order, then say how many and their lines."""
    files = sorted(p.name for p in root.iterdir() if p.is_file() and not p.name.startswith("."))
    for name in files:
        if name not in read:
            return Decision(f"Reading {name}.", [("read_file", {"path": name})])
    lines = sum(len((root / name).read_text(errors="replace").splitlines()) for name in files)
    return Decision(f"I read all {len(files)} files, one a step: {lines} lines in all.")


def _requests(messages: Sequence[ChatMessage]) -> list[str]:
    """The person's requests in order: those an earlier summary holds (`Request N: '...'`), then the typed ones."""
    summarized = [
        str(ast.literal_eval(line))
        for m in messages
        if m.role == "user" and m.content.startswith(SUMMARY_MARK)
        for line in _SUMMARIZED.findall(m.content)
    ]
    return summarized + [typed_part(m.content) for m in messages if _is_request(m)]


def summarize(messages: Sequence[ChatMessage]) -> str:
    """A summary made from the conversation alone, the same for the same messages: what the scripted model answers
    when asked to summarize (each request, an earlier summary's too; the tools called; the last reply)."""
    numbered = list(enumerate(_requests(messages), 1))
    # Bounded like a real summary: the first requests and the latest, the rest counted.
    shown = numbered if len(numbered) <= _SUMMARY_REQUESTS else numbered[:5] + numbered[-(_SUMMARY_REQUESTS - 5) :]
    lines = [f"Request {n}: {text[:300]!r}" for n, text in shown]
    if len(shown) < len(numbered):
        lines.insert(5, f"({len(numbered) - len(shown)} requests between these are left out)")
    calls = [c.name for m in messages if m.role == "assistant" for c in m.tool_calls or ()]
    if calls:
        lines.append(f"Tool calls: {len(calls)} ({', '.join(sorted(set(calls)))})")
    read = _files_read(messages)
    if read:
        lines.append(f"Files read: {json.dumps(read[-_SUMMARY_READS:])}")
    replies = [m.content for m in messages if m.role == "assistant" and m.content]
    if replies:
        lines.append(f"Last reply: {replies[-1][:200]!r}")
    return "\n".join(lines) or "Nothing was asked yet."


def _read_given(given: list[tuple[str, str]]) -> str:
    """What the files given by `@` references hold, as read: each one's lines and its first and last line."""
    said = []
    for label, text in given:
        lines = text.splitlines()
        if not lines:
            said.append(f"{label} is empty.")
            continue
        ends = f"it begins {lines[0].strip()!r}" + (f" and ends {lines[-1].strip()!r}" if len(lines) > 1 else "")
        said.append(f"{label} holds {len(lines)} line{'' if len(lines) == 1 else 's'}: {ends}.")
    return "I read what you gave me. " + " ".join(said)


def _is_question(task: str) -> bool:
    return task.rstrip().endswith("?") or bool(_QUESTION_START.match(task))


def _steps(turn: Sequence[ChatMessage]) -> list[Step]:
    results = {m.tool_call_id: m.content for m in turn if m.role == "tool"}
    return [Step(c, results.get(c.id)) for m in turn if m.role == "assistant" for c in m.tool_calls or ()]


def _report_refusal(step: Step) -> Decision:
    what = _describe_call(step.call, step.args)
    return Decision(f"I could not {what}: {step.result}. I stopped there; tell me how you want to go on.")


def _report_interrupted(step: Step) -> Decision:
    what = _describe_call(step.call, step.args)
    detail = (step.result or "").removeprefix(INTERRUPTED).strip()
    return Decision(
        f"I started to {what}, and it was interrupted: {detail}. I stopped there; tell me how you want to go on."
    )


def _describe_call(call: ToolCall, args: dict[str, object]) -> str:
    if call.name == "run_command":
        return f"run `{args.get('command', '')}`"
    return f"use {call.name} on {args.get('path', '')}".rstrip()


def _run_given(command: str, steps: list[Step], root: Path) -> Decision:
    done = [s for s in steps if s.call.name == "run_command" and s.args.get("command") == command]
    if not done:
        return Decision(f"Running `{command}`.", [("run_command", {"command": command})])
    step = done[-1]
    result = step.result or ""
    if result.startswith(OUTCOME_UNKNOWN):
        detail = result.removeprefix(OUTCOME_UNKNOWN).strip()
        return Decision(
            f"I do not know how `{command}` went: {detail}. I will not run it again on a guess; look at the "
            "workspace, and ask me to run it again if it should be."
        )
    if result.startswith(OUTPUT_LOST):
        detail = result.removeprefix(OUTPUT_LOST).strip()
        return Decision(f"`{command}` ended, but I cannot tell you what it printed: {detail}.")
    report = parse_test_output(result)
    if report is not None:
        return Decision(describe_report(report, root))
    return Decision(f"`{command}` finished. The end of its output:\n{_tail(result, 12)}")


def _tail(text: str, count: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-count:])


def test_command(root: Path) -> str:
    """unittest always works; pytest (native tracebacks) when the project is set up for it and it is installed."""
    py = python_command()
    configured = (root / "conftest.py").exists() or (root / "pytest.ini").exists()
    pyproject = root / "pyproject.toml"
    if pyproject.exists() and "[tool.pytest" in pyproject.read_text(encoding="utf-8", errors="replace"):
        configured = True
    if configured and importlib.util.find_spec("pytest") is not None:
        return f"{py} -m pytest -q --tb=native"
    return f"{py} -m unittest -v"


def _test_run(step: Step) -> TestReport | None:
    if step.call.name != "run_command" or step.result is None:
        return None
    return parse_test_output(step.result)


def _work(steps: list[Step], root: Path, *, fix: bool) -> Decision:
    runs = [i for i, s in enumerate(steps) if _test_run(s) is not None]
    attempted = [s for s in steps if s.call.name == "run_command"]
    if not runs:
        if attempted and not attempted[-1].unknown:
            return Decision(
                f"The test command did not produce a test report I can read. Its output ends with:\n"
                f"{_tail(attempted[-1].result or '', 12)}"
            )
        command = test_command(root)
        return Decision(f"I'll run the test suite with `{command}`.", [("run_command", {"command": command})])
    report = _test_run(steps[runs[-1]])
    assert report is not None
    edits = [s for s in steps if s.call.name == "edit_file" and (s.result or "").startswith("edited ")]
    if report.ok:
        if edits or any(s.unknown for s in steps):
            return Decision(_fixed_summary(steps, report))
        return Decision(f"{describe_report(report, root)} Nothing to fix.")
    if not fix:
        return Decision(describe_report(report, root))
    if len(edits) >= _MAX_EDITS:
        tried = f"I have made {len(edits)} edits and it still fails; I stop here."
        return Decision(f"{describe_report(report, root)} {tried}")
    after = steps[runs[-1] + 1 :]
    if any(s.unknown for s in after):
        return Decision(
            "The outcome of my last change is unknown (the previous run was interrupted), so I check by running "
            "the tests again.",
            [("run_command", {"command": test_command(root)})],
        )
    failure = report.failures[0] if report.failures else None
    if failure is None:
        return Decision(f"{describe_report(report, root)} The output names no failing case I can read, so I stop here.")
    edit = next((s for s in after if s.call.name == "edit_file"), None)
    if edit is not None:
        if not (edit.result or "").startswith("edited "):
            return Decision(f"My edit was refused: {edit.result}. I stop here so you can look.")
        command = test_command(root)
        return Decision("Now the tests again.", [("run_command", {"command": command})])
    return _next_fix_step(failure, after, root)


def describe_report(report: TestReport, root: Path | None = None) -> str:
    if report.ok:
        return f"All {report.ran} tests pass ({report.summary})."
    counts = f"{report.ran} tests ran, {len(report.failures)} failing" if report.ran is not None else report.summary
    parts = [f"{counts}."]
    for failure in report.failures:
        parts.append(f"The failing case is `{failure.name}` ({failure.where}): {failure.error or failure.kind}")
        origin = _origin(failure)
        if origin is not None:
            file = _rel(root, origin.file) if root else origin.file
            parts[-1] += f", raised in `{origin.function}` at {file}:{origin.line} (`{origin.source}`)"
        parts[-1] += "."
    return " ".join(parts)


def _origin(failure: Failure) -> Frame | None:
    """The deepest frame in the project's own code (not the test runner's)."""
    own = [f for f in failure.frames if "/unittest/" not in f.file and "site-packages" not in f.file]
    return own[-1] if own else None


def _test_frame(failure: Failure) -> Frame | None:
    return next((f for f in failure.frames if f.function == failure.name), None)


def _rel(root: Path, file: str) -> str:
    path = Path(file)
    try:
        return path.resolve().relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
    except ValueError:
        return file


def _read_result(steps: Sequence[Step], rel: str) -> str | None:
    return next(
        (s.result for s in steps if s.call.name == "read_file" and s.args.get("path") == rel and s.finished),
        None,
    )


def _next_fix_step(failure: Failure, after: list[Step], root: Path) -> Decision:
    test_frame, origin = _test_frame(failure), _origin(failure)
    if test_frame is None or origin is None or origin is test_frame:
        return Decision(
            f"`{failure.name}` fails with {failure.error or failure.kind}, but the traceback does not lead into "
            "the project's code, so I do not know what to change. I stop here."
        )
    test_rel, src_rel = _rel(root, test_frame.file), _rel(root, origin.file)
    test_text = _read_result(after, test_rel)
    if test_text is None:
        return Decision(
            f"`{failure.name}` fails with {failure.error}, raised in `{origin.function}` at {src_rel}:"
            f"{origin.line}. Let me read the test to see what it expects.",
            [("read_file", {"path": test_rel})],
        )
    src_text = _read_result(after, src_rel)
    if src_text is None:
        expectation = expected_outcome(test_text, test_frame.line)
        seen = f"The test expects `{test_frame.source}`" if expectation else "I see the test"
        return Decision(f"{seen}. Now the code in {src_rel}.", [("read_file", {"path": src_rel})])
    fix = propose_fix(failure, origin, test_frame, test_text, src_text, src_rel)
    if fix is None:
        return Decision(
            f"`{failure.name}` fails with {failure.error} at {src_rel}:{origin.line} (`{origin.source}`). "
            "I can only repair a division by zero that the test says how to handle, so I leave this one to you."
        )
    return Decision(fix.why, [("edit_file", {"path": fix.path, "old": fix.old, "new": fix.new})])


def _fixed_summary(steps: list[Step], report: TestReport) -> str:
    first = next((r for s in steps if (r := _test_run(s)) is not None and not r.ok), None)
    edited = sorted(
        {
            str(s.args.get("path"))
            for s in steps
            if s.call.name in ("edit_file", "write_file") and ((s.result or "").startswith("edited ") or s.unknown)
        }
    )
    cases = ", ".join(f"`{f.name}`" for f in first.failures) if first else "the failing case"
    return (
        f"Fixed: {cases} passes now after my edit of {', '.join(edited)}. "
        f"All {report.ran} tests pass ({report.summary})."
    )


# --- the edit -------------------------------------------------------------------------------------


def expected_outcome(test_text: str, line: int) -> tuple[str, str] | None:
    """What the failing test line wants: ("return", literal source) or ("raise", exception name)."""
    lines = test_text.splitlines()
    if not 1 <= line <= len(lines):
        return None
    for back in range(0, 3):
        if line - back < 1:
            break
        raises = re.search(r"(?:assertRaises|raises)\(\s*([A-Za-z_][\w.]*)", lines[line - 1 - back])
        if raises:
            return "raise", raises.group(1)
    statement = lines[line - 1].strip()
    try:
        node = ast.parse(statement).body[0]
    except (SyntaxError, IndexError):
        return None
    candidates: list[ast.expr] = []
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        call = node.value
        name = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if name == "assertIsNone":
            return "return", "None"
        if name.startswith("assert") and len(call.args) >= 2:
            candidates = list(call.args[:2])
    elif (
        isinstance(node, ast.Assert)
        and isinstance(node.test, ast.Compare)
        and len(node.test.comparators) == 1
        and isinstance(node.test.ops[0], ast.Eq | ast.Is)
    ):
        candidates = [node.test.left, node.test.comparators[0]]
    for candidate in candidates:
        try:
            ast.literal_eval(candidate)
        except ValueError:
            continue
        source = ast.get_source_segment(statement, candidate)
        if source is not None:
            return "return", source
    return None


def _divisor(source_line: str) -> str | None:
    try:
        tree = ast.parse(source_line.strip())
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.FloorDiv | ast.Mod):
            return ast.get_source_segment(source_line.strip(), node.right)
    return None


def propose_fix(
    failure: Failure, origin: Frame, test_frame: Frame, test_text: str, src_text: str, src_rel: str
) -> Fix | None:
    """A guard before the dividing line, returning (or raising) what the failing test expects."""
    if failure.exception != "ZeroDivisionError":
        return None
    lines = src_text.splitlines(keepends=True)
    if not 1 <= origin.line <= len(lines):
        return None
    target = lines[origin.line - 1]
    divisor = _divisor(target)
    outcome = expected_outcome(test_text, test_frame.line)
    if divisor is None or outcome is None:
        return None
    indent = target[: len(target) - len(target.lstrip())]
    inner = indent + ("    " if "\t" not in indent else "\t")
    sized = re.fullmatch(r"len\((.+)\)", divisor)
    condition = f"not {sized.group(1)}" if sized else f"{divisor} == 0"
    kind, value = outcome
    action = f"return {value}" if kind == "return" else f"raise {value}({f'{divisor} is zero'!r})"
    # Grow the replaced text upward until it occurs once, so the edit cannot land in the wrong place.
    start = origin.line - 1
    while src_text.count("".join(lines[start : origin.line])) > 1 and start > 0:
        start -= 1
    old = "".join(lines[start : origin.line])
    new = "".join(lines[start : origin.line - 1]) + f"{indent}if {condition}:\n{inner}{action}\n" + target
    when = f"`{sized.group(1)}` is empty" if sized else f"`{divisor}` is zero"
    wants = f"expects {value}" if kind == "return" else f"expects {value} to be raised"
    why = (
        f"`{origin.function}` divides by `{divisor}`, which fails when {when}; `{failure.name}` {wants}. "
        f"I'll add `if {condition}: {action}` before that line in {src_rel}."
    )
    return Fix(src_rel, old, new, why)


# --- answering from the conversation -----------------------------------------------------------------


def answer_from_history(question: str, history: Sequence[ChatMessage], root: Path | None = None) -> str | None:
    """An answer built from earlier turns only, or None when they hold nothing about the question."""
    steps = _steps(history)
    q = question.lower()
    if _TESTS.search(q) or "case" in q or "error" in q:
        reports = [(s, r) for s in steps if (r := _test_run(s)) is not None]
        failing = [(s, r) for s, r in reports if not r.ok]
        if not reports:
            return None
        if not failing:
            return f"No case failed: the last test run said {reports[-1][1].summary}."
        chosen = failing[0] if _ordinal(q) == 0 else failing[-1]
        answer = describe_report(chosen[1], root)
        if reports[-1][1].ok and reports[-1] is not chosen:
            answer += f" A later run passed ({reports[-1][1].summary})."
        return f"From the earlier test run: {answer}"
    if any(word in q for word in ("change", "edit", "fix", "modif")):
        edits = [s for s in steps if s.call.name in ("edit_file", "write_file") and not s.refused]
        if not edits:
            return "I have not changed any file in this session."
        return "I changed: " + "; ".join(f"{s.args.get('path')} ({s.result})" for s in edits) + "."
    if "ask" in q or "request" in q:
        # Requests a compaction replaced are read back from its summary (`Request N: '...'`).
        asked = _requests(history)
        return _recall(q, asked, "you asked", "request") if asked else None
    replies = [m.content for m in history if m.role == "assistant" and m.content]
    return _recall(q, replies, "I said", "reply") if replies else None


_ORDINALS = {"first": 0, "second": 1, "third": 2, "last": -1, "latest": -1, "previous": -1, "before": -1}


def _ordinal(question: str) -> int:
    """Which earlier item a question points at: "first" is the earliest, and the latest by default."""
    for word in re.findall(r"[a-z]+", question):
        if word in _ORDINALS:
            return _ORDINALS[word]
    return -1


def _recall(question: str, items: Sequence[str], verb: str, noun: str) -> str:
    """The item of `items` the question points at, quoted: the first, the second..., or the latest."""
    index = _ordinal(question)
    if index >= len(items):
        return f"There were only {len(items)} earlier {noun}s in this session."
    text = repr(items[index]) if noun == "request" else items[index]
    if index == 0 and len(items) > 1:
        return f"First {verb}: {text}" + ("." if noun == "request" else "")
    if index > 0:
        return f"{noun.capitalize()} number {index + 1}: {text}" + ("." if noun == "request" else "")
    return f"{'You asked' if noun == 'request' else 'Earlier I said'}: {text}" + ("." if noun == "request" else "")

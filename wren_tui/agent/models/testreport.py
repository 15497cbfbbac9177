"""Reading test-runner output (unittest, and pytest with native tracebacks) into failing cases."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_UNITTEST_HEADER = re.compile(r"^(ERROR|FAIL): (\S+) \(([^)]*)\)\s*$")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ")
_UNITTEST_RESULT = re.compile(r"^(OK|FAILED)\b(?: \((.*)\))?")
_PYTEST_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_PYTEST_SUMMARY = re.compile(r"^=*\s*((?:\d+ \w+(?:, )?)+) in [\d.]+s")
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|error|errors|skipped|xfailed|xpassed|deselected)")
_PYTEST_FAILED = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - (.*))?$")
_FRAME = re.compile(r'^\s*File "(.+)", line (\d+), in (.+)$')
_NOT_ERRORS = ("Traceback", "During handling", "The above exception", "---", "===")
_RULE = re.compile(r"^(=|-){20,}$")


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str
    source: str


@dataclass(frozen=True)
class Failure:
    name: str
    where: str
    kind: str
    error: str
    frames: tuple[Frame, ...]

    @property
    def exception(self) -> str:
        return self.error.split(":", 1)[0].strip()


@dataclass(frozen=True)
class TestReport:
    runner: Literal["unittest", "pytest"]
    ran: int | None
    failures: tuple[Failure, ...]
    ok: bool
    summary: str

    @property
    def passed(self) -> int | None:
        return None if self.ran is None else self.ran - len(self.failures)


def parse_test_output(text: str) -> TestReport | None:
    """The report in a test run's output, or None when the output is not a test run we can read."""
    lines = text.splitlines()
    return _unittest(lines) or _pytest(lines)


def _traceback(lines: list[str]) -> tuple[tuple[Frame, ...], str]:
    frames: list[Frame] = []
    error = ""
    i = 0
    while i < len(lines):
        match = _FRAME.match(lines[i])
        if match:
            source = ""
            if i + 1 < len(lines) and lines[i + 1].startswith("    ") and not _FRAME.match(lines[i + 1]):
                source = lines[i + 1].strip()
                i += 1
            frames.append(Frame(match.group(1), int(match.group(2)), match.group(3).strip(), source))
        elif lines[i] and not lines[i][0].isspace() and not lines[i].startswith(_NOT_ERRORS):
            error = lines[i].strip()
        i += 1
    return tuple(frames), error


def _unittest(lines: list[str]) -> TestReport | None:
    ran = next((int(m.group(1)) for line in lines if (m := _UNITTEST_RAN.match(line))), None)
    result = next((m for line in lines if (m := _UNITTEST_RESULT.match(line))), None)
    if ran is None or result is None:
        return None
    failures: list[Failure] = []
    i = 0
    while i < len(lines):
        header = _UNITTEST_HEADER.match(lines[i])
        if not header:
            i += 1
            continue
        body: list[str] = []
        i += 1
        while i < len(lines) and not _UNITTEST_HEADER.match(lines[i]) and not _UNITTEST_RAN.match(lines[i]):
            body.append(lines[i])
            i += 1
        while body and (not body[-1].strip() or _RULE.match(body[-1])):
            body.pop()
        frames, error = _traceback(body)
        where = header.group(3)
        # Python 3.11 writes "module.Class.test"; older ones "module.Class".
        if where.endswith("." + header.group(2)):
            where = where[: -len(header.group(2)) - 1]
        failures.append(Failure(header.group(2), where, header.group(1), error, frames))
    summary = f"Ran {ran} tests: {result.group(0)}"
    return TestReport("unittest", ran, tuple(failures), result.group(1) == "OK", summary)


def _pytest(lines: list[str]) -> TestReport | None:
    summary = next((m for line in reversed(lines) if (m := _PYTEST_SUMMARY.match(line))), None)
    if summary is None:
        return None
    counts = {kind: int(n) for n, kind in _PYTEST_COUNT.findall(summary.group(1))}
    bad = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    ran = counts.get("passed", 0) + bad
    ids = {m.group(2): (m.group(1), m.group(3) or "") for line in lines if (m := _PYTEST_FAILED.match(line))}
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        header = _PYTEST_HEADER.match(line)
        if header:
            current = sections.setdefault(header.group(1).replace(".", "::"), [])
        elif line.startswith("====") or line.startswith("----"):
            current = None
        elif current is not None:
            current.append(line)
    failures: list[Failure] = []
    for node, (kind, short) in ids.items():
        name = node.rsplit("::", 1)[-1]
        body = next((b for key, b in sections.items() if node.endswith(key)), [])
        frames, error = _traceback(body)
        where = node[: -len(name) - 2] if node.endswith("::" + name) else node
        failures.append(Failure(name, where, "FAIL" if kind == "FAILED" else "ERROR", error or short, frames))
    return TestReport("pytest", ran, tuple(failures), bad == 0, summary.group(0).strip("= "))

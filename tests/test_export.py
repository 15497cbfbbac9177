"""wren export as a user runs it: Markdown, one HTML page, JSON; each parsed back, hostile text inert.

The HTML is read back with the standard library's HTML parser: every text of the session is in it,
and no element or attribute could run code or load anything from elsewhere.
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.agent.tty import HOSTILE, obeyed_characters
from tests.conftest import run_wren
from tests.tui.journals import SESSION, TEST_OUTPUT, assistant, finished_story, story, user, write_journal
from tests.tui.test_hostile_text import PAYLOADS
from wren_tui.export import ExportRefused, export_session
from wren_tui.journal.events import Delta, Error, ToolCall, ToolEnd, ToolStart
from wren_tui.journal.locks import lock, release
from wren_tui.journal.reader import read_events
from wren_tui.journal.visible import visible


class Page(HTMLParser):
    """An HTML document as the elements, attributes and text a browser would see."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.texts: list[str] = []
        self._in: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs.extend((tag, name, value) for name, value in attrs)
        self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()

    def handle_data(self, data: str) -> None:
        if not self._in or self._in[-1] not in ("style", "title"):
            self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


# What an exported page may hold: plain document elements, no script, no frame, no form, no media.
ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "p", "dl", "dt", "dd", "section",
    "div", "span", "article", "details", "summary", "pre", "table", "tr", "th", "td", "a",
}  # fmt: skip


def assert_inert(page: Page) -> None:
    assert set(page.tags) <= ALLOWED_TAGS, set(page.tags) - ALLOWED_TAGS
    for tag, name, value in page.attrs:
        assert not name.startswith("on"), (tag, name, value)
        assert name not in ("src", "srcset", "action", "formaction"), (tag, name)
        if name == "href":
            assert value is not None and value.startswith("#seq-"), (tag, name, value)  # links within the page only
        if name == "style":
            assert value is not None and "url(" not in value and "expression" not in value, value
    assert not obeyed_characters(page.text), sorted(set(obeyed_characters(page.text)))


def test_html_export_is_one_page_with_the_conversation_the_tool_timings_and_the_waterfall(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "journals" / f"{SESSION}.jsonl", finished_story())
    proc = run_wren(["export", SESSION, "--format", "html", "--dir", str(journal.parent)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / f"{SESSION}.html"
    assert proc.stdout.strip() == f"wrote {out.name}"
    page = parse(out)
    assert_inert(page)
    text = page.text
    assert "run the tests, find the failing case and fix it" in text
    assert "ZeroDivisionError: division by zero" in text  # a tool's result, whole
    assert "Fixed: mean([]) now returns 0.0 and all 8 tests pass." in text
    html = out.read_text()
    # The waterfall: one bar per call, placed on the session's time axis, coloured by outcome.
    bars = re.findall(r'class="bar (\w+)" style="left:([\d.]+)%;width:([\d.]+)%"', html)
    assert [b[0] for b in bars] == ["failed", "ok", "ok", "ok"]
    lefts = [float(b[1]) for b in bars]
    assert lefts == sorted(lefts) and 0 < lefts[0] < lefts[-1] < 100
    # The tool timings: a row per call with its elapsed time and state.
    assert re.search(r"<td>shell</td>.*?412 ms.*?failed", html)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "<script" not in html and "http" not in html.replace('http-equiv="Content-Security-Policy"', "")


def test_markdown_export_reads_as_a_pull_request_description(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    out = tmp_path / "pr.md"
    proc = run_wren(["export", str(journal), "--format", "md", "-o", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert text.startswith(f"# Session `{SESSION}`\n")
    assert '| 1 | `shell` | `{"command": "python -m pytest -q"}` | 412 ms | failed |' in text
    assert "```text\nrun the tests, find the failing case and fix it\n```" in text
    assert "```text\nFixed: mean([]) now returns 0.0 and all 8 tests pass.\n```" in text


def test_markdown_export_shows_dates_plain_in_code_spans_not_escaped(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    out = tmp_path / "pr.md"
    proc = run_wren(["export", str(journal), "--format", "md", "-o", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    read = read_events(journal).events
    first, last = read[0].ts, read[-1].ts
    assert f"- started `{first}`, last event `{last}`" in text
    assert "\\-" not in text.split("## Conversation")[0]  # nothing in the head is escaped to be read raw


def test_json_export_is_the_events_as_read_with_the_verdict_first(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    out = tmp_path / "out" / "session.json"
    out.parent.mkdir()
    proc = run_wren(["export", str(journal), "--format", "json", "-o", str(out)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(out.read_bytes())
    assert list(document)[:3] == ["id", "path", "stoppedAtLine"]
    assert document["reason"] is None and document["torn"] is False
    lines = journal.read_bytes().splitlines()
    assert [json.dumps(e, separators=(",", ":")).encode() for e in document["events"]] == lines


def test_an_export_of_a_damaged_journal_says_where_reading_stopped_first_and_exits_4(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    data = journal.read_bytes()
    lines = data.splitlines(keepends=True)
    lines[9] = lines[9].replace(b"reading", b"READING")  # its CRC no longer matches
    journal.write_bytes(b"".join(lines))
    for fmt in ("html", "md", "json"):
        proc = run_wren(["export", str(journal), "--format", fmt, "-o", str(tmp_path / f"out.{fmt}")], cwd=tmp_path)
        assert proc.returncode == 4, (fmt, proc.stderr)
        assert "line 10" in proc.stderr and "CRC" in proc.stderr
    html = (tmp_path / "out.html").read_text()
    stop = html.index('<p class="stop"')
    assert stop < html.index("<dl") < html.index('id="conversation"')  # on its first screen
    assert "Reading stopped at line 10 (byte" in parse(tmp_path / "out.html").text
    assert "test_mean_of_empty fails" not in html  # nothing after the bad line is shown
    md = (tmp_path / "out.md").read_text()
    assert md.splitlines()[2].startswith("> **Reading stopped at line 10")
    document = json.loads((tmp_path / "out.json").read_bytes())
    assert document["stoppedAtLine"] == 10 and "CRC" in document["reason"]
    assert len(document["events"]) == 9


def _hostile_journal(path: Path, payload: str) -> Path:
    call = ToolCall("call_1", f"tool{payload}", json.dumps({"arg": payload}))
    return write_journal(
        path,
        [
            user(f"user says {payload}"),
            Delta(text=f"partial {payload}"),
            Error(message=f"error says {payload}", retryable=True, attempt=1),
            assistant(f"assistant says {payload}", call),
            ToolStart(id="call_1", name=f"tool{payload}", read_only=True),
            ToolEnd(id="call_1", ok=True, elapsed_ms=5, chars=3),
            assistant(f"last {payload}"),
        ],
    )


HOSTILE_CASES = {**{name: raw for name, (raw, _shown) in PAYLOADS.items()}, **{n: raw for n, raw, _ in HOSTILE}}
HOSTILE_CASES["html tags"] = '<script>alert(1)</script><img src="http://evil.example/x" onerror="alert(2)">'
HOSTILE_CASES["markdown link and fence"] = "[click](javascript:alert(1)) ``` ~~~ <b>x</b>"


@pytest.mark.parametrize("name", list(HOSTILE_CASES))
def test_hostile_text_stays_inert_in_every_export(tmp_path: Path, name: str) -> None:
    payload = HOSTILE_CASES[name]
    journal = _hostile_journal(tmp_path / f"{SESSION}.jsonl", payload)
    html = export_session(journal, "html", tmp_path / "out.html").path
    page = parse(html)
    assert_inert(page)
    shown = visible(payload)
    for said in ("user says", "assistant says", "error says", "partial", "last"):
        assert f"{said} {shown}" in page.text, said
    md = export_session(journal, "md", tmp_path / "out.md").path.read_text()
    assert not obeyed_characters(md)
    # In Markdown every journal text is inside a fence it cannot close, or inline code.
    for block in re.findall(r"^(`{3,})text\n(.*?)\n\1$", md, flags=re.S | re.M):
        assert not re.search(rf"^{block[0]}", block[1], flags=re.M)
    assert f"assistant says {shown}" in md
    document = json.loads(export_session(journal, "json", tmp_path / "out.json").path.read_bytes())
    assert document["events"][0]["message"]["content"] == f"user says {payload}"  # JSON keeps the text as written


def test_an_export_is_never_named_like_a_journal_and_never_written_over_one(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    before = journal.read_bytes()
    with pytest.raises(ExportRefused, match=r"never named \.jsonl"):
        export_session(journal, "json", journal)
    with pytest.raises(ExportRefused, match=r"never named \.jsonl"):
        export_session(journal, "md", tmp_path / "other.jsonl")
    proc = run_wren(["export", str(journal), "-o", str(tmp_path / "x.jsonl")], cwd=tmp_path)
    assert proc.returncode == 1 and "never named .jsonl" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_wren(["export", str(journal), "-o", str(tmp_path / "missing" / "x.md")], cwd=tmp_path)
    assert proc.returncode == 1 and "no such folder" in proc.stderr and "Traceback" not in proc.stderr
    assert journal.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [journal.name]  # no temporary file left behind


def test_an_export_replaces_its_file_whole_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    out = tmp_path / "session.html"
    out.write_text("an older export")
    inode = out.stat().st_ino
    export_session(journal, "html", out)
    assert out.stat().st_ino != inode  # a new file renamed into place, not the old one rewritten
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([journal.name, out.name])
    assert read_events(journal).ok


def test_an_export_of_a_live_session_shows_the_running_call(tmp_path: Path) -> None:
    journal = write_journal(tmp_path / f"{SESSION}.jsonl", story())
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND)
    try:
        lock(fd, journal)  # a writer holds it, as a running agent does
        html = export_session(journal, "html", tmp_path / "live.html").path.read_text()
    finally:
        release(fd)
        os.close(fd)
    assert "live (still being written)" in html
    assert re.search(r'class="bar running"', html)
    offline = export_session(journal, "html", tmp_path / "cut.html").path.read_text()
    assert re.search(r'class="bar unknown"', offline) and "outcome unknown" in offline
    assert TEST_OUTPUT.splitlines()[-1] in offline


def test_an_export_for_a_browser_is_handed_on_as_bytes_and_leaves_no_file(tmp_path: Path) -> None:
    import tempfile

    from wren_tui.export import export_bytes

    journal = write_journal(tmp_path / f"{SESSION}.jsonl", finished_story())
    before = set(Path(tempfile.gettempdir()).glob("wren-export-*"))
    name, data, stopped = export_bytes(journal, "html")
    assert name == f"{SESSION}.html" and stopped is None
    assert data.startswith(b"<!DOCTYPE html>") and b"Fixed: mean([])" in data
    assert set(Path(tempfile.gettempdir()).glob("wren-export-*")) == before

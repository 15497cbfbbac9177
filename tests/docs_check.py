"""The README and docs/ as a reader meets them: fences that close, links that lead somewhere, every page reachable.

`python -m tests.docs_check` (run by `just lint`) prints each problem as PATH:LINE: what, and exits 1
if there is one. The checks are the ones a Markdown renderer makes visible:

- a fence (a line starting with ``` or ~~~) opened and never closed turns the rest of the page into
  code, and an empty fenced block is almost always a doubled fence line;
- a relative link to a file that does not exist is a dead link on every forge, and a link to a heading
  (`page.md#a-heading`, `#a-heading`) that the page does not have lands at its top;
- a page of docs/ (or of a folder in it) that the README does not link, directly or through another
  page it links, is a page nobody finds.

A page the code names (`docs/NAME.md` in a help text, an error or a comment of wren_tui/) must exist
too: a page moved or merged leaves those behind.

And two the README promises its reader: it is at most 300 lines (what Wren is, the Quickstart, the
commands and links; the rest is in docs/), and its Quickstart is one block of exactly two commands.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def fence_problems(path: Path) -> list[str]:
    """Unclosed fences and empty fenced blocks in one Markdown file."""
    problems: list[str] = []
    opened: tuple[int, str] | None = None
    body = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = _FENCE.match(line)
        if opened is None:
            if fence:
                opened, body = (number, fence.group(1)), 0
            continue
        start, marker = opened
        if (
            fence
            and fence.group(1)[0] == marker[0]
            and len(fence.group(1)) >= len(marker)
            and not line.strip()[len(fence.group(1)) :].strip()
        ):
            if body == 0:
                problems.append(f"{path.relative_to(ROOT)}:{start}: an empty fenced block (a doubled fence line?)")
            opened = None
        else:
            body += 1
    if opened is not None:
        problems.append(f"{path.relative_to(ROOT)}:{opened[0]}: a fence opened here is never closed")
    return problems


def _prose(path: Path) -> list[tuple[int, str]]:
    """The lines outside fenced blocks, with their numbers."""
    lines: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            inside = not inside
        elif not inside:
            lines.append((number, line))
    return lines


def anchors_of(path: Path) -> set[str]:
    """The anchors a forge makes of a page's headings: lowercased, punctuation dropped, spaces as hyphens,
    a repeated heading's second anchor ending in -1."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _number, line in _prose(path):
        heading = _HEADING.match(line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
            found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return found


def links_with_anchors(path: Path) -> list[tuple[int, str, str]]:
    """Relative links (no scheme) outside fenced blocks: line number, file (empty: this page), anchor."""
    found: list[tuple[int, str, str]] = []
    for number, line in _prose(path):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            file, _, anchor = target.partition("#")
            found.append((number, file, anchor))
    return found


def links_of(path: Path) -> list[tuple[int, str]]:
    """Relative links to files (no scheme, no bare #anchor) outside fenced blocks, with their line numbers."""
    return [(number, file) for number, file, _anchor in links_with_anchors(path) if file]


def problems(root: Path = ROOT) -> list[str]:
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    out: list[str] = []
    for page in pages:
        out += fence_problems(page)
        for number, file, anchor in links_with_anchors(page):
            target = page.parent / file if file else page
            if not target.exists():
                out.append(f"{page.relative_to(root)}:{number}: the link {file!r} leads to no file")
            elif anchor and target.suffix == ".md" and anchor not in anchors_of(target):
                out.append(
                    f"{page.relative_to(root)}:{number}: the link {file}#{anchor} names no heading of "
                    f"{target.relative_to(root)}"
                )
    reached = {root / "README.md"}
    todo = [root / "README.md"]
    while todo:
        page = todo.pop()
        for _number, target in links_of(page):
            linked = (page.parent / target).resolve()
            if linked.suffix == ".md" and linked.exists() and linked not in reached:
                reached.add(linked)
                todo.append(linked)
    out += readme_problems(root / "README.md")
    out += named_page_problems(root)
    out += [
        f"{page.relative_to(root)}: no page linked from README.md leads here"
        for page in pages
        if page.resolve() not in reached
    ]
    return out


README_LINES = 300
_NAMED_PAGE = re.compile(r"\bdocs/[\w./-]+\.md\b")


def named_page_problems(root: Path) -> list[str]:
    """Each `docs/NAME.md` the package names (help texts, errors, comments) that is no page."""
    out: list[str] = []
    for source in sorted((root / "wren_tui").rglob("*.py")):
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            out += [
                f"{source.relative_to(root)}:{number}: names {page}, which is no page"
                for page in _NAMED_PAGE.findall(line)
                if not (root / page).is_file()
            ]
    return out


def readme_problems(readme: Path) -> list[str]:
    """The README longer than README_LINES, or a Quickstart that is not one block of exactly two commands."""
    lines = readme.read_text(encoding="utf-8").splitlines()
    out = [f"README.md: {len(lines)} lines, more than {README_LINES}"] if len(lines) > README_LINES else []
    try:
        start = lines.index("## Quickstart") + 1
    except ValueError:
        return [*out, "README.md: no '## Quickstart' section"]
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in lines[start:end]:
        if _FENCE.match(line):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None and line.strip() and not line.lstrip().startswith("#"):
            current.append(line)
    if len(blocks) != 1 or len(blocks[0]) != 2:
        commands = sum(len(block) for block in blocks)
        out.append(
            f"README.md:{start}: the Quickstart holds {len(blocks)} block(s) of {commands} command(s); "
            "it promises one block of exactly two"
        )
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

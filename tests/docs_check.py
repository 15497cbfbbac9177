"""The README and docs/ as a reader meets them: fences that close, links that lead somewhere, every page reachable.

`python -m tests.docs_check` (run by `just lint`) prints each problem as PATH:LINE: what, and exits 1
if there is one. The checks are the ones a Markdown renderer makes visible:

- a fence (a line starting with ``` or ~~~) opened and never closed turns the rest of the page into
  code, and an empty fenced block is almost always a doubled fence line;
- a relative link to a file that does not exist is a dead link on every forge;
- a page of docs/ that the README does not link, directly or through another page it links, is a page
  nobody finds.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_LINK = re.compile(r"\]\(([^)\s]+)\)")


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


def links_of(path: Path) -> list[tuple[int, str]]:
    """Relative links (no scheme, no bare #anchor) outside fenced blocks, with their line numbers."""
    found: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if _FENCE.match(line):
            inside = not inside
            continue
        if inside:
            continue
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            found.append((number, target.split("#", 1)[0]))
    return found


def problems(root: Path = ROOT) -> list[str]:
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    out: list[str] = []
    for page in pages:
        out += fence_problems(page)
        for number, target in links_of(page):
            if target and not (page.parent / target).exists():
                out.append(f"{page.relative_to(root)}:{number}: the link {target!r} leads to no file")
    reached = {root / "README.md"}
    todo = [root / "README.md"]
    while todo:
        page = todo.pop()
        for _number, target in links_of(page):
            linked = (page.parent / target).resolve()
            if linked.suffix == ".md" and linked.exists() and linked not in reached:
                reached.add(linked)
                todo.append(linked)
    out += [
        f"{page.relative_to(root)}: no page linked from README.md leads here"
        for page in pages
        if page.resolve() not in reached
    ]
    return out


def main() -> int:
    found = problems()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

"""The README and docs/ render as written: fences close, relative links lead to files, every page has a way in."""

from __future__ import annotations

from pathlib import Path

from tests.docs_check import fence_problems, problems


def test_the_readme_and_every_docs_page_have_closed_fences_live_links_and_a_way_in_from_the_readme() -> None:
    assert problems() == []


def test_a_doubled_fence_and_a_fence_left_open_are_both_reported_at_their_lines(tmp_path: Path, monkeypatch) -> None:
    import tests.docs_check as check

    monkeypatch.setattr(check, "ROOT", tmp_path)
    page = tmp_path / "page.md"
    page.write_text("# T\n\n```\n```\nwren run TASK\n```\n\nprose\n", encoding="utf-8")
    assert fence_problems(page) == [
        "page.md:3: an empty fenced block (a doubled fence line?)",
        "page.md:6: a fence opened here is never closed",
    ]
    page.write_text("```sh\nwren demo\n```\n\n~~~\n```\n~~~\n", encoding="utf-8")
    assert fence_problems(page) == []

"""The README and docs/ render as written: fences close, relative links lead to files, every page has a way in."""

from __future__ import annotations

from pathlib import Path

from tests.docs_check import fence_problems, named_page_problems, problems, readme_problems


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


def test_a_link_to_a_heading_the_page_lacks_and_an_unlinked_page_in_a_docs_folder_are_reported(tmp_path: Path) -> None:
    (tmp_path / "docs" / "agents").mkdir(parents=True)
    (tmp_path / "README.md").write_text(
        "# Wren\n\nSee [agents](docs/agents.md#claude-code), [keys](docs/agents.md#the-keys) and [here](#wren).\n"
        "\n## Quickstart\n\n```sh\npip install -e .\nwren demo\n```\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "agents.md").write_text(
        "# Agents\n\n## Claude Code\n\ntext\n\n```\n## The keys\n```\n\n## Claude Code\n\n[again](#claude-code-1)\n",
        encoding="utf-8",
    )
    (tmp_path / "docs" / "agents" / "pi.md").write_text("# pi\n", encoding="utf-8")
    assert problems(tmp_path) == [
        "README.md:3: the link docs/agents.md#the-keys names no heading of docs/agents.md",
        "docs/agents/pi.md: no page linked from README.md leads here",
    ]


def test_a_readme_over_300_lines_or_a_quickstart_of_three_commands_is_reported(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "# Wren\n\n## Quickstart\n\n```sh\npip install -e .\nwren demo\n```\n\n## More\n", encoding="utf-8"
    )
    assert readme_problems(readme) == []
    readme.write_text(
        "# Wren\n\n## Quickstart\n\n```sh\npip install -e .\nwren demo\npython -m pytest\n```\n" + "prose\n" * 300,
        encoding="utf-8",
    )
    assert readme_problems(readme) == [
        "README.md: 309 lines, more than 300",
        "README.md:3: the Quickstart holds 1 block(s) of 3 command(s); it promises one block of exactly two",
    ]


def test_a_page_the_package_names_that_is_gone_is_reported_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "agents.md").write_text("# Agents\n", encoding="utf-8")
    (tmp_path / "wren_tui" / "cli").mkdir(parents=True)
    (tmp_path / "wren_tui" / "cli" / "watch.py").write_text(
        '"""See docs/agents.md."""\nHELP = "what each agent records: docs/other-agents.md"\n', encoding="utf-8"
    )
    assert named_page_problems(tmp_path) == ["wren_tui/cli/watch.py:2: names docs/other-agents.md, which is no page"]

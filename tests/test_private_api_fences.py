"""Fences around the private names of libraries Wren leans on.

Each private name is used on purpose (the reason is beside its use) and its library is capped in
pyproject.toml below the next release that could move it. When the cap is lifted, these tests say at
once whether the private name still means what Wren relies on, instead of a user finding out.
"""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _requirement(name: str, extra: str | None = None) -> str:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    listed = project["optional-dependencies"][extra] if extra else project["dependencies"]
    found = [r for r in listed if re.match(rf"{re.escape(name)}\s*[<>=!~;]", r)]
    assert found, f"{name} is not among the {'extra ' + extra if extra else 'dependencies'}"
    return found[0]


@pytest.mark.parametrize(
    ("name", "extra"),
    [("textual", None), ("textual-serve", None), ("nats-py", "fleet"), ("nats-py", "dev")],
)
def test_every_library_whose_private_names_wren_uses_has_an_upper_bound(name: str, extra: str | None) -> None:
    assert "<" in _requirement(name, extra), f"{name} needs an upper bound: Wren uses a private name of it"


def test_textual_serve_still_builds_its_web_app_in_make_app() -> None:
    # wren_tui/cli/watch.py: ViewerServer.serve() hands aiohttp's run_app the awaitable _make_app() returns.
    from textual_serve.server import Server

    make_app = getattr(Server, "_make_app", None)
    assert make_app is not None and inspect.iscoroutinefunction(make_app)
    assert list(inspect.signature(make_app).parameters) == ["self"]
    assert inspect.signature(make_app).return_annotation in ("web.Application", "Application")


def test_textuals_footer_key_still_has_what_the_fitting_footer_measures() -> None:
    # wren_tui/tui/widgets/key_footer.py: KeyFooter measures Footer's FooterKey children to drop keys.
    from textual.widget import Widget
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    assert issubclass(FooterKey, Widget)
    key = FooterKey("q", "q", "Quit", "app.quit")
    assert (key.key, key.key_display, key.description, key.action) == ("q", "q", "Quit", "app.quit")
    assert callable(Footer.compose)


def test_nats_pys_protocol_queue_is_still_a_coroutine_taking_the_bytes_of_a_command() -> None:
    # wren_tui/fleet/batch.py: an atomic batch's plain messages go straight to Client._send_command.
    pytest.importorskip("nats", reason="the fleet extra is not installed")
    from nats.aio.client import Client

    send = getattr(Client, "_send_command", None)
    assert send is not None and inspect.iscoroutinefunction(send)
    parameters = list(inspect.signature(send).parameters)
    assert parameters[:2] == ["self", "cmd"]

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
    # wren_tui/cli/serve.py: ViewerServer.serve() hands aiohttp's run_app the awaitable _make_app() returns.
    from textual_serve.server import Server

    make_app = getattr(Server, "_make_app", None)
    assert make_app is not None and inspect.iscoroutinefunction(make_app)
    assert list(inspect.signature(make_app).parameters) == ["self"]
    assert inspect.signature(make_app).return_annotation in ("web.Application", "Application")


def test_every_method_the_viewer_server_overrides_is_still_textual_serves_with_the_same_parameters() -> None:
    # wren_tui/cli/serve.py: ViewerServer replaces _make_app, serve, handle_index, handle_websocket (and two
    # hooks) wholesale; a method textual-serve renames or reshapes would be silently skipped or misfed.
    from textual_serve.server import Server

    from wren_tui.cli.serve import ViewerServer

    overridden = {
        name: value
        for name, value in vars(ViewerServer).items()
        if inspect.isfunction(value) and not name.startswith("__") and name not in ("announce", "guard")
    }
    assert set(overridden) == {
        "_make_app", "serve", "handle_index", "handle_websocket", "initialize_logging", "on_startup",
    }  # fmt: skip
    for name, ours in overridden.items():
        theirs = getattr(Server, name, None)
        assert theirs is not None, f"textual-serve's Server has no {name} any more"
        assert inspect.iscoroutinefunction(theirs) == inspect.iscoroutinefunction(ours), name
        assert list(inspect.signature(theirs).parameters) == list(inspect.signature(ours).parameters), name
    assert list(inspect.signature(Server.__init__).parameters)[:5] == ["self", "command", "host", "port", "title"]


def _template_names(template: str) -> set[str]:
    """The dotted names a Jinja template reads (`{{ a.b or 'x' }}` reads a.b)."""
    return set(re.findall(r"{{\s*([A-Za-z_][\w.]*)", template))


def test_the_viewer_servers_page_context_gives_every_name_textual_serves_page_template_reads() -> None:
    # wren_tui/cli/serve.py: handle_index renders textual-serve's app_index.html with a context of its own.
    import textual_serve

    from wren_tui.cli.serve import index_context

    template = (Path(textual_serve.__file__).parent / "templates" / "app_index.html").read_text()
    read = _template_names(template)
    # ping_url: read by the template, given by neither textual-serve's own handle_index nor ours.
    assert read == {"font_size", "app_websocket_url", "config.static.url", "application.name", "ping_url"}
    context = index_context(16, "wren watch")
    for name in read - {"ping_url"}:
        value: object = context
        for part in name.split("."):
            assert isinstance(value, dict) and part in value, f"the page's {name} is not in the context"
            value = value[part]


def test_the_template_name_reader_reads_dotted_names_and_ignores_statements() -> None:
    assert _template_names("{{ a }} {{b.c or 'x'}} {% if d %}{{ e.f.g }}{% endif %}") == {"a", "b.c", "e.f.g"}


def test_textuals_footer_key_still_has_what_the_fitting_footer_measures() -> None:
    # wren_tui/tui/widgets/key_footer.py: KeyFooter measures Footer's FooterKey children to drop keys.
    from textual.widget import Widget
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    assert issubclass(FooterKey, Widget)
    key = FooterKey("q", "q", "Quit", "app.quit")
    assert (key.key, key.key_display, key.description, key.action) == ("q", "q", "Quit", "app.quit")
    assert callable(Footer.compose)


def test_textuals_on_decorator_still_records_a_classs_handlers_in_decorated_handlers_by_message_type() -> None:
    # wren_tui/tui/messages.py: is_pane reads a widget class's `_decorated_handlers` (Textual's private table of
    # its `@on(...)` handlers) to tell a pane that handles a pane message by `@on` rather than by name.
    from textual import on
    from textual.message import Message
    from textual.widget import Widget

    class Ping(Message):
        pass

    class Handles(Widget):
        @on(Ping)
        def pinged(self, message: Ping) -> None: ...

    table = vars(Handles).get("_decorated_handlers")
    assert isinstance(table, dict) and Ping in table


def test_nats_pys_protocol_queue_is_still_a_coroutine_taking_the_bytes_of_a_command() -> None:
    # wren_tui/fleet/batch.py: an atomic batch's plain messages go straight to Client._send_command.
    pytest.importorskip("nats", reason="the fleet extra is not installed")
    from nats.aio.client import Client

    send = getattr(Client, "_send_command", None)
    assert send is not None and inspect.iscoroutinefunction(send)
    parameters = list(inspect.signature(send).parameters)
    assert parameters[:2] == ["self", "cmd"]

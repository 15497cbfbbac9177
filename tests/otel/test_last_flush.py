"""Ctrl+C while spans are being sent lets the request finish; the flush `wren otel` makes on its way out (what is
left after that Ctrl+C) stops at the next Ctrl+C at once: the person has asked once already.

Before, that last flush held a Ctrl+C as the first one was held (its request let finish, up to its 10 s deadline),
so after a collector that does not answer, two more were needed to stop. In the process: each request here sends
itself a SIGINT (a Ctrl+C landing in the request) and then fails or finishes.
"""

from __future__ import annotations

import os
import signal

import pytest

from wren_tui.export.otel import OtlpSender, SendFailed, SpanRecord


def sender_with_a_span(posts: list[str], fail: bool) -> OtlpSender:
    sender = OtlpSender("http://127.0.0.1:9")

    def post(_body: bytes) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # a Ctrl+C lands in the request
        posts.append("finished")  # reached only when the Ctrl+C is held
        if fail:
            raise SendFailed("the collector did not answer")

    sender._post = post  # type: ignore[assignment,method-assign]
    sender.add(SpanRecord("invoke_agent wren", 1, 1, None, 1_000, 2_000, {}))
    return sender


def test_a_ctrl_c_in_a_flush_lets_its_request_finish_then_stops() -> None:
    posts: list[str] = []
    sender = sender_with_a_span(posts, fail=False)
    with pytest.raises(KeyboardInterrupt):
        sender.flush()
    assert posts == ["finished"] and sender.exported == 1
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_last_flush_after_a_ctrl_c_stops_at_the_next_one_at_once() -> None:
    posts: list[str] = []
    sender = sender_with_a_span(posts, fail=True)
    with pytest.raises(KeyboardInterrupt):
        sender.flush()  # the first Ctrl+C: the request let finish (it failed), the span kept
    assert posts == ["finished"]
    with pytest.raises(KeyboardInterrupt):
        sender.flush(stopping=True)  # wren otel's last flush: the second Ctrl+C stops it in its request
    assert posts == ["finished"] and sender.exported == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

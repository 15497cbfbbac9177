"""wren_tui.forwarding: a member read (and, where settable, written) through another object, as the
properties it replaced did; and the wrappers built on it hand their source's state on both ways."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from wren_tui.forwarding import Forward


class _Inner:
    def __init__(self) -> None:
        self.offset = 0
        self.name = "inner"


class _Outer:
    offset: Forward[int] = Forward("inner.offset", settable=True)
    name: Forward[str] = Forward("inner.name")
    own: Forward[int] = Forward("_own")

    def __init__(self, inner: _Inner) -> None:
        self.inner = inner
        self._own = 7


def test_a_forwarded_member_reads_the_inner_objects_value_as_it_is_now() -> None:
    inner = _Inner()
    outer = _Outer(inner)
    inner.offset, inner.name = 42, "moved"
    assert (outer.offset, outer.name, outer.own) == (42, "moved", 7)


def test_a_settable_member_writes_through_to_the_inner_object() -> None:
    inner = _Inner()
    outer = _Outer(inner)
    outer.offset = 99
    assert inner.offset == 99
    assert "offset" not in vars(outer)  # nothing shadows it on the wrapper


def test_a_read_only_member_refuses_to_be_set_and_leaves_both_objects_as_they_were() -> None:
    inner = _Inner()
    outer = _Outer(inner)
    with pytest.raises(AttributeError, match=r"inner\.name is read through this object"):
        outer.name = "other"
    with pytest.raises(AttributeError, match="_own is read through this object"):
        outer.own = 1
    assert (inner.name, outer.own) == ("inner", 7)


def test_a_forwarded_member_is_no_dataclass_field() -> None:
    @dataclass(frozen=True)
    class Row:
        inner: _Inner
        name = Forward[str]("inner.name")

    row = Row(_Inner())
    assert row.name == "inner"
    assert [f for f in Row.__dataclass_fields__] == ["inner"]


def test_the_capped_reader_hands_its_readers_position_on_both_ways() -> None:
    from wren_tui.sessions.replay import CappedReader

    class Reader:
        offset, lineno, stop, scanned = 10, 2, None, 0

        def chunks(self, stop: int | None = None) -> object:
            return iter(())

    inner = Reader()
    capped = CappedReader(inner, lambda: 100)  # type: ignore[arg-type]
    assert (capped.offset, capped.lineno, capped.stop, capped.scanned) == (10, 2, None, 0)
    capped.offset, capped.lineno, capped.scanned = 20, 3, 5
    assert (inner.offset, inner.lineno, inner.scanned) == (20, 3, 5)

"""A `Record` is what `@dataclass` gave its classes, without importing dataclasses: repr, equality, replace,
pickling and copying; a `Frozen` one cannot be assigned to and is hashable. A slot that is no field is a cache,
left out of all of them. A class whose `__slots__` are not its declared fields (and caches) is refused when it is
defined."""

from __future__ import annotations

import copy
import pickle

import pytest

from wren_tui.records import Frozen, Record


class Point(Frozen):
    __slots__ = ("x", "y")
    x: int
    y: int

    def __init__(self, x: int, y: int = 0) -> None:
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)


class Bag(Record):
    __slots__ = ("_total", "items", "name")
    name: str
    items: list[int]

    def __init__(self, name: str, items: list[int] | None = None) -> None:
        self.name = name
        self.items = [] if items is None else items
        self._total: int | None = None  # a cache: no field

    def total(self) -> int:
        if self._total is None:
            self._total = sum(self.items)
        return self._total


class Sack(Bag):
    __slots__ = ("size",)
    size: int

    def __init__(self, name: str, items: list[int] | None = None, size: int = 1) -> None:
        super().__init__(name, items)
        self.size = size


def test_a_records_fields_are_its_declared_ones_in_order_its_parents_first() -> None:
    assert Point._fields == ("x", "y") == vars(Point)["__match_args__"]
    assert Sack._fields == ("name", "items", "size")
    match Point(1, 2):
        case Point(x, y):  # type: ignore[misc]  # (the checker knows no __match_args__ that is not written out)
            assert (x, y) == (1, 2)


def test_a_record_is_shown_with_its_fields_and_not_its_caches() -> None:
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    sack = Sack("s", [1], 3)
    assert sack.total() == 1 and repr(sack) == "Sack(name='s', items=[1], size=3)"


def test_records_are_equal_by_class_and_fields() -> None:
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(1, 3)
    assert Bag("b") == Bag("b", []) and Bag("b", [1]) != Bag("b")
    assert Bag("b") != Sack("b") and Sack("b") != Bag("b")  # another class, even a subclass, is not equal
    assert Point(1, 2) != (1, 2)
    counted = Bag("b", [2])
    assert counted.total() == 2 and counted == Bag("b", [2])  # a cache filled or not: the same value


def test_a_frozen_record_is_hashable_and_cannot_be_changed_a_mutable_one_is_unhashable() -> None:
    point = Point(1, 2)
    assert hash(point) == hash(Point(1, 2)) and {point: 1}[Point(1, 2)] == 1
    with pytest.raises(AttributeError, match="cannot assign to field 'x' of a Point"):
        point.x = 3
    with pytest.raises(AttributeError, match="cannot delete field 'y'"):
        del point.y
    with pytest.raises(AttributeError):
        point.z = 1  # type: ignore[attr-defined]
    assert point == Point(1, 2)
    with pytest.raises(TypeError, match="unhashable"):
        hash(Bag("b"))
    bag = Bag("b")
    bag.items.append(1)
    bag.name = "c"
    assert bag == Bag("c", [1])


def test_replace_makes_a_changed_copy_and_refuses_an_unknown_field_or_a_cache() -> None:
    point = Point(1, 2)
    assert point.replace(y=5) == Point(1, 5) and point == Point(1, 2)
    sack = Sack("s", [1], 3)
    assert sack.total() == 1
    changed = sack.replace(items=[1, 2])
    assert changed == Sack("s", [1, 2], 3) and changed.total() == 3  # its cache made again, not copied
    with pytest.raises(TypeError):
        point.replace(z=1)
    with pytest.raises(TypeError):
        sack.replace(_total=5)


def test_records_pickle_and_copy_as_themselves() -> None:
    for value in (Point(1, 2), Sack("s", [1, 2], 3)):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.copy(value) == value and copy.deepcopy(value) == value
    deep = copy.deepcopy(Sack("s", [1]))
    assert deep.items == [1] and type(deep) is Sack


def test_a_class_whose_slots_are_not_its_fields_and_caches_is_refused() -> None:
    with pytest.raises(TypeError, match="Loose's __slots__ are not its fields"):

        class Loose(Record):
            __slots__ = ("a",)
            a: int
            b: int

    with pytest.raises(TypeError, match="Public's __slots__ are not its fields"):

        class Public(Record):
            __slots__ = ("a", "b")  # b: no field, and not named as a cache
            a: int


def test_a_record_declared_without_postponed_annotations_takes_its_fields() -> None:
    """A module without `from __future__ import annotations` gives its annotations as types, not text."""
    namespace: dict[str, object] = {}
    source = (
        "from typing import ClassVar\n"
        "from wren_tui.records import Frozen\n"
        "class Point(Frozen):\n"
        "    __slots__ = ('x', 'y')\n"
        "    x: int\n"
        "    y: int\n"
        "    KIND: ClassVar[str] = 'point'\n"
        "    def __init__(self, x: int, y: int) -> None:\n"
        "        object.__setattr__(self, 'x', x)\n"
        "        object.__setattr__(self, 'y', y)\n"
    )
    # Compiled on its own (not inheriting this module's postponed annotations): its annotations are evaluated.
    exec(compile(source, "<a module>", "exec", dont_inherit=True), namespace)
    point = namespace["Point"](1, 2)  # type: ignore[operator]
    assert repr(point) == "Point(x=1, y=2)" and point.replace(y=3) == namespace["Point"](1, 3)  # type: ignore[attr-defined,operator]

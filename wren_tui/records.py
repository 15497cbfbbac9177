"""A value class without `dataclasses`: its fields declared, named in `__slots__` and set by its own `__init__`.

`dataclasses` imports inspect, ast, dis and tokenize (about 6 ms), and each class it decorates compiles its
methods when its module is imported (0.2 to 0.5 ms a class): a warm `wren search` decorated 18 classes it
mostly never made. A `Record` declares its fields (annotated, in the order its `__init__` takes them), names
them in `__slots__` and sets them in an `__init__` written out; from those it has what `@dataclass` gave: a
repr, equality (the same class and equal fields; unhashable, as a mutable dataclass), `replace` (as
`dataclasses.replace`), `__match_args__`, pickling and copying. A `Frozen` record cannot be assigned to and is
hashable, as `@dataclass(frozen=True)`; its `__init__` sets its fields with `object.__setattr__`, as a frozen
dataclass's does.

A slot that is no declared field (its name starts with "_") is a cache the class fills: it is left out of the
repr, equality, `replace` and pickling (a copy's `__init__` makes it again).

Only the standard library's typing is imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Self


class Record:
    """A mutable value: its fields are declared and named in `__slots__`; its `__init__` takes them in their order."""

    __slots__ = ()
    # Every field, the base classes' first (as a dataclass orders an inherited one's).
    _fields: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Its own fields in the order they are declared (the annotations' text: nothing is evaluated), each with its
        # slot (a field without one would be a class attribute); a slot that is no field is a cache, named "_...".
        annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (no inspect)
        declared = [name for name, kind in annotations.items() if "ClassVar" not in str(kind)]
        slots = cls.__dict__.get("__slots__", ())
        slots = {slots} if isinstance(slots, str) else set(slots)
        if not slots >= set(declared) or any(not name.startswith("_") for name in slots.difference(declared)):
            raise TypeError(f"{cls.__qualname__}'s __slots__ are not its fields {declared} and caches named _...")
        cls._fields = (*cls._fields, *declared)
        setattr(cls, "__match_args__", cls._fields)  # noqa: B010 (a class's own, not declared for the checker)

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._fields])

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # equal by value and mutable: no hash, as a mutable dataclass

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` (field=value) made, as `dataclasses.replace`: an unknown field is a TypeError."""
        for name in self._fields:
            if name not in changes:
                changes[name] = getattr(self, name)
        return type(self)(**changes)

    __replace__ = replace  # copy.replace (Python 3.13)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled and copied as its class called with its fields (a frozen one cannot be assigned to after)."""
        return (type(self), self._values())


def fields_of(value: object) -> dict[str, Any]:
    """A record as msgspec wrote the dataclass it replaced: its fields by name, in their order (an encoder's
    `enc_hook`, or the standard library's `default`: a record in a Struct's field or in a command's JSON)."""
    if isinstance(value, Record):
        return {name: getattr(value, name) for name in value._fields}
    raise TypeError(f"Encoding objects of type {type(value).__qualname__} is unsupported")


class Frozen(Record):
    """An immutable value, hashable by its fields: its `__init__` sets them with `object.__setattr__`."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._values())

    if not TYPE_CHECKING:  # at run time only: the type checker reads its fields as declared

        def __setattr__(self, name: str, value: object) -> None:
            raise AttributeError(f"cannot assign to field {name!r} of a {type(self).__qualname__}")

        def __delattr__(self, name: str) -> None:
            raise AttributeError(f"cannot delete field {name!r} of a {type(self).__qualname__}")

"""A member that is another object's: `offset = Forward[int]("inner.offset")` reads `self.inner.offset`.

The one definition of what many classes here did member by member (a `@property` returning
`self.inner.offset`, and a setter writing it where the member is settable): a wrapper that hands a
source's state on, a row that answers with its record's fields, a screen with its reader's.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Generic, Self, TypeVar, overload

T = TypeVar("T")


class Forward(Generic[T]):
    """A class attribute read through a dotted path from the instance (`"inner.offset"`, `"_journals"`).

    With `settable`, assigning to it assigns at the end of the path (`self.inner.offset = value`);
    without, assigning raises AttributeError, as a property without a setter does.
    """

    __slots__ = ("_get", "_path", "_settable")

    def __init__(self, path: str, *, settable: bool = False) -> None:
        self._path = path
        self._get = attrgetter(path)
        self._settable = settable

    @overload
    def __get__(self, obj: None, owner: type[Any] | None = None) -> Self: ...

    @overload
    def __get__(self, obj: object, owner: type[Any] | None = None) -> T: ...

    def __get__(self, obj: object | None, owner: type[Any] | None = None) -> T | Self:
        if obj is None:
            return self
        value: T = self._get(obj)
        return value

    def __set__(self, obj: object, value: T) -> None:
        holder, _, name = self._path.rpartition(".")
        if not self._settable or not holder:
            raise AttributeError(f"{self._path} is read through this object, not set on it")
        setattr(attrgetter(holder)(obj), name, value)

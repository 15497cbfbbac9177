"""A member that is another object's: `offset = Forward[int]("inner.offset")` reads `self.inner.offset`.

The one definition of what many classes here did member by member (a `@property` returning
`self.inner.offset`, and a setter writing it where the member is settable): a wrapper that hands a
source's state on, a row that answers with its record's fields, a screen with its reader's.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar, overload

T = TypeVar("T")


class Forward(property, Generic[T]):
    """A class attribute read through a dotted path from the instance (`"inner.offset"`, `"_journals"`).

    With `settable`, assigning to it assigns at the end of the path (`self.inner.offset = value`);
    without, assigning raises AttributeError, as a property without a setter does. A property whose
    getter is an `operator.attrgetter`: read as fast as an attribute of an attribute is in C.
    """

    def __init__(self, path: str, *, settable: bool = False) -> None:
        super().__init__(attrgetter(path), _setter(path, settable))

    if TYPE_CHECKING:

        @overload
        def __get__(self, obj: None, owner: type[Any] | None = None, /) -> Self: ...

        @overload
        def __get__(self, obj: object, owner: type[Any] | None = None, /) -> T: ...

        def __get__(self, obj: object | None, owner: type[Any] | None = None, /) -> T | Self: ...

        def __set__(self, obj: object, value: T, /) -> None: ...


def _setter(path: str, settable: bool) -> Callable[[object, Any], None]:
    holder, _, name = path.rpartition(".")
    if not settable or not holder:

        def refuse(obj: object, value: Any) -> None:
            raise AttributeError(f"{path} is read through this object, not set on it")

        return refuse
    inner = attrgetter(holder)

    def assign(obj: object, value: Any) -> None:
        setattr(inner(obj), name, value)

    return assign

"""Each format module hands its Format every name it declares for a field, explicitly.

A format module builds `FORMAT = Format(name=NAME, ..., kinds=Kinds(..., claims=claims), ...)` with each field
named (mypy checks them). What no type checker sees is a field the module declares and forgets to pass: a function
named as the field (`kept_with`, `node_of`) or a constant in capitals (`SUFFIX`, `WHERE`) that is never
given, so the format silently takes the default. This test reads every format module of
`wren_tui/foreign/` (any module that builds a FORMAT, registered or not) and fails on such a name.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

import wren_tui.foreign
from wren_tui.foreign.base import Format
from wren_tui.records import Record

FOREIGN = Path(wren_tui.foreign.__file__).parent
# A FORMAT built whole, or as another's with what differs replaced (Kilo's is OpenCode's).
_BUILT = re.compile(r"^FORMAT = (Format\(|\w+\.FORMAT\.replace\()", re.M)
MODULES = sorted(p.stem for p in FOREIGN.glob("*.py") if _BUILT.search(p.read_text()))


def _fields(fmt: Format) -> list[tuple[str, object]]:
    """Every field of a Format by its path (`node_of`, `folder.suffix`), those of its groups included."""
    found: list[tuple[str, object]] = []
    for field in fmt._fields:
        value = getattr(fmt, field)
        if isinstance(value, Record):
            found.extend((f"{field}.{each}", getattr(value, each)) for each in value._fields)
        else:
            found.append((field, value))
    return found


def _unpassed(module: ModuleType) -> list[str]:
    """The module's names for fields of `Format` (or of its groups) whose objects its FORMAT does not hold."""
    names = vars(module)
    missing = []
    for path, value in _fields(names["FORMAT"]):
        field = path.rpartition(".")[2]
        for name in (field.upper(), field):
            declared = names.get(name)
            if declared is None or (name == field and not callable(declared)):
                continue
            if value is not declared:
                missing.append(f"{module.__name__}.{name} is not FORMAT.{path}")
            break
    return missing


def test_there_are_format_modules_to_check() -> None:
    assert {"claude", "opencode", "kilo", "aider", "atif"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_name_a_format_module_declares_for_a_field_is_its_formats(name: str) -> None:
    assert _unpassed(importlib.import_module(f"wren_tui.foreign.{name}")) == []


def test_a_function_named_as_a_field_and_not_passed_is_caught() -> None:
    module = ModuleType("forgetful")
    toy = importlib.import_module("tests.foreign.toy_format")
    module.FORMAT = toy.FORMAT  # type: ignore[attr-defined]
    module.node_of = lambda _line: None  # type: ignore[attr-defined]
    module.SUFFIX = ".toy"  # type: ignore[attr-defined]
    module.claims = toy.claims  # type: ignore[attr-defined]  # passed: no complaint
    assert _unpassed(module) == [
        "forgetful.SUFFIX is not FORMAT.folder.suffix",
        "forgetful.node_of is not FORMAT.node_of",
    ]

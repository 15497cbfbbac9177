"""Each format module hands its Format every name it declares for a field, explicitly.

A format module builds `FORMAT = Format(name=NAME, ..., claims=claims, ...)` with each field named (mypy
checks them). What no type checker sees is a field the module declares and forgets to pass: a function
named as the field (`kept_with`, `node_of`) or a constant in capitals (`SUFFIX`, `WHERE`) that is never
given, so the format silently takes the default. This test reads every format module of
`wren_tui/foreign/` (any module that builds a FORMAT, registered or not) and fails on such a name.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

import wren_tui.foreign
from wren_tui.foreign.base import Format

FOREIGN = Path(wren_tui.foreign.__file__).parent
MODULES = sorted(p.stem for p in FOREIGN.glob("*.py") if re.search(r"^FORMAT = Format\b", p.read_text(), re.M))


def _unpassed(module: ModuleType) -> list[str]:
    """The module's names for fields of `Format` whose objects its FORMAT does not hold."""
    names = vars(module)
    fmt = names["FORMAT"]
    missing = []
    for field in dataclasses.fields(Format):
        for name in (field.name.upper(), field.name):
            declared = names.get(name)
            if declared is None or (name == field.name and not callable(declared)):
                continue
            if getattr(fmt, field.name) is not declared:
                missing.append(f"{module.__name__}.{name} is not FORMAT.{field.name}")
            break
    return missing


def test_there_are_format_modules_to_check() -> None:
    assert {"claude", "opencode", "aider", "atif"} <= set(MODULES)


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
    assert _unpassed(module) == ["forgetful.node_of is not FORMAT.node_of", "forgetful.SUFFIX is not FORMAT.suffix"]

"""A widget's component classes (Textual's `COMPONENT_CLASSES`), read from the `DEFAULT_CSS` that styles them, so
that each class is named once, beside its style."""

from __future__ import annotations

import re

_CLASS = re.compile(r"\.([a-z]+--[a-z-]+)\b")


def component_classes(css: str) -> set[str]:
    """The component classes (`.conversation--user`, `prefix--name`) a widget's CSS gives a style."""
    return set(_CLASS.findall(css))

"""The models Wren can talk to: one table from a `--model` name to the factory that makes its gateway.

A new model is one module in this package, with `create(setup: ModelSetup) -> Gateway`, and one
line in MODELS. `wren run --model NAME` and `Settings.model` accept exactly the names here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Gateway, ModelFactory, ModelSetup


def _module(name: str) -> ModelFactory:
    """The `create` of this package's module `name`, imported only when that model is chosen.

    So the registry costs nothing to load, and `wren run` with the offline model never imports httpx.
    """

    def create(setup: ModelSetup) -> Gateway:
        factory: ModelFactory = importlib.import_module(f"{__name__}.{name}").create
        return factory(setup)

    return create


MODELS: dict[str, ModelFactory] = {
    "scripted": _module("scripted"),
    "openai": _module("openai"),
    "anthropic": _module("anthropic"),
}


def default_model(env: Mapping[str, str]) -> str:
    """WREN_PROVIDER when set; else `openai` when WREN_API_KEY is set, the offline `scripted` model otherwise.

    An ANTHROPIC_API_KEY alone chooses nothing: it is often set for other programs, and the offline
    model must stay the default for them.
    """
    provider = env.get("WREN_PROVIDER", "").strip()
    if provider:
        if provider not in MODELS:
            from .base import ModelUnavailable

            raise ModelUnavailable(
                f"WREN_PROVIDER={provider}: there is no such model; choose one of: {', '.join(MODELS)}"
            )
        return provider
    return "openai" if env.get("WREN_API_KEY") else "scripted"


def unknown_model(name: str) -> str:
    """The sentence for a name that is not in the registry."""
    return f"--model {name}: there is no such model; choose one of: {', '.join(MODELS)}"

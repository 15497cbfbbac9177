"""`wren verify`: every checksum of every kept copy (`wren keep`'s store) checked; exit 4 when one is damaged."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from .exits import Exit
from .options import agents_option, command_parser, json_option


def register(sub: Any, common: argparse.ArgumentParser) -> None:

    p = command_parser(
        sub,
        "verify",
        cmd_verify,
        "Read every kept copy and every earlier version in Wren's kept store ($WREN_KEEP_DIR, else "
        "$XDG_STATE_HOME/wren/kept, else ~/.local/state/wren/kept) and check each against the sha256 its manifest "
        "recorded. Each damaged one is printed (its path, which version of which file, what differs), and the "
        "exit status is 4; 0 when the store is whole. What a kill leaves (bytes or a copy not yet recorded, a "
        "manifest line cut short) is said, and is no damage. Nothing is written.",
    )
    agents_option(p, "this agent's copies only")
    json_option(p)


def cmd_verify(args: argparse.Namespace) -> Exit:
    from ..keep.status import human
    from ..keep.store import kept_root
    from ..keep.verifying import verify
    from .console import out, print_json

    root = kept_root(os.environ, Path(os.environ.get("HOME") or Path.home()))
    done = verify(root, args.agent)
    if args.json:
        print_json(done.as_json())
    else:
        for damage in done.damage:
            out(damage.sentence())
        for note in done.notes:
            out(note)
        state = "whole" if not done.damage else f"{len(done.damage)} damaged"
        out(
            f"{root}: {done.files:,} kept file{'' if done.files == 1 else 's'}, {done.versions:,} "
            f"version{'' if done.versions == 1 else 's'}, {human(done.bytes)} checked: {state}"
        )
    return Exit.UNREADABLE if done.damage else Exit.OK

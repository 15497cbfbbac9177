"""Write the sample journals in journals/ by running the real agent (`just samples`).

- a complete run of the scripted agent on a fresh demo workspace;
- a run killed (SIGKILL) right after it journals the start of a tool call with side effects,
  which leaves that call's outcome unknown;
- a fork of the complete run at its last clean point (through `wren fork`);
- a run killed mid-way whose last line is then cut short, as a crash before the page cache
  reached the disk leaves it (a torn tail).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wren_tui.agent.workspace import prepare_workspace
from wren_tui.journal.events import ToolEnd, ToolStart
from wren_tui.journal.forking import fork, fork_points
from wren_tui.journal.reader import Tail, read_events
from wren_tui.journal.store import describe_session, new_session_id

TASK = "run the tests, find the failing case and fix it"
DEADLINE_S = 120


def _agent(folder: Path, session: str, scratch: Path, *, pace: bool) -> subprocess.Popen[bytes]:
    workspace = prepare_workspace(scratch / session)
    command = [sys.executable, "-m", "wren_tui", "run", "--yes", "--workspace", str(workspace), "--dir", str(folder)]
    if pace:
        command += ["--pace-factor", "0.5"]
    return subprocess.Popen(
        [*command, "--session-id", session, TASK], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _kill_when(folder: Path, session: str, scratch: Path, wanted: type, side_effect: bool) -> Path | None:
    """Run the agent and SIGKILL it as soon as its journal holds an event of type `wanted`."""
    path = folder / f"{session}.jsonl"
    agent = _agent(folder, session, scratch, pace=True)
    tail = Tail(path)
    deadline = time.monotonic() + DEADLINE_S
    try:
        while agent.poll() is None and time.monotonic() < deadline:
            for event in tail.read().events:
                if isinstance(event, wanted) and (not isinstance(event, ToolStart) or event.read_only != side_effect):
                    os.kill(agent.pid, signal.SIGKILL)
                    agent.wait()
                    return path
            time.sleep(0.002)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    return None


def main(argv: list[str]) -> int:
    folder = Path(argv[0] if argv else "journals").resolve()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wren-samples-") as tmp:
        scratch = Path(tmp)
        done = new_session_id()
        subprocess.run(
            [sys.executable, "-m", "wren_tui", "run", "--yes", "--workspace", str(prepare_workspace(scratch / done)),
             "--dir", str(folder), "--session-id", done, TASK],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        print(f"complete run:     {done} ({describe_session(folder / f'{done}.jsonl').state})")

        for _attempt in range(5):
            time.sleep(1.1)  # session ids carry the second they were made
            cut = new_session_id()
            path = _kill_when(folder, cut, scratch, ToolStart, side_effect=True)
            if path is not None and describe_session(path).state == "outcome unknown":
                print(f"killed mid-call:  {cut} (outcome unknown)")
                break
            if path is not None:
                path.unlink()  # the call finished before the kill landed; try again
        else:
            print("could not stop the agent inside a call with side effects in 5 attempts", file=sys.stderr)
            return 1

        parent = folder / f"{done}.jsonl"
        point = fork_points(read_events(parent).events)[-1]
        forked = fork(parent, point.seq, folder=folder)
        print(f"fork:             {forked.id} (from {done} at seq {point.seq})")

        time.sleep(1.1)  # ids carry the second: the torn sample must sort after the fork made this second
        torn = new_session_id()
        path = _kill_when(folder, torn, scratch, ToolEnd, side_effect=False)
        if path is None:
            print("the agent ended before it could be stopped for the torn sample", file=sys.stderr)
            return 1
        size = path.stat().st_size
        last_line = path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        os.truncate(path, size - len(last_line) // 2 - 1)
        print(f"torn tail:        {torn} ({describe_session(path).state})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

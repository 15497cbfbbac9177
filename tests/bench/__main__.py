"""`python -m tests.bench [NAME ...]`: run every bench_*.py module (or those named) and print one table."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import traceback
from pathlib import Path

from tests.bench import BenchRow


def discover() -> list[str]:
    here = Path(__file__).parent
    return sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))


def table(rows: list[BenchRow]) -> str:
    head = "| what | ours | baseline | ratio | target | verdict |\n| --- | --- | --- | --- | --- | --- |"
    body = []
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        body.append(f"| {r.what} | {r.ours} | {r.baseline} | {ratio} | {r.target} | {r.verdict} |")
    return "\n".join([head, *body])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    parser.add_argument("names", nargs="*", help="modules to run, e.g. journal for bench_journal (default: all)")
    args = parser.parse_args(argv)
    modules = discover()
    wanted = [n if n.startswith("bench_") else f"bench_{n}" for n in args.names]
    unknown = [n for n in wanted if n not in modules]
    if unknown:
        print(f"no benchmark module {', '.join(unknown)}; there are: {', '.join(modules)}", file=sys.stderr)
        return 2
    rows: list[BenchRow] = []
    failed = False
    for name in wanted or modules:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            rows.extend(importlib.import_module(f"tests.bench.{name}").run())
        except Exception as exc:  # one broken module must not hide the others' figures
            traceback.print_exc()
            rows.append(BenchRow(name, "-", "-", None, "-", f"ERROR: {exc}"))
            failed = True
    print(table(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

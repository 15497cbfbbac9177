# Wren's recipes. `just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Fresh demo workspace, the scripted agent, and the viewer watching it live
demo:
    wren demo

# The viewer on the journals folder (or a session id / path)
watch *ARGS:
    wren watch {{ARGS}}

# Regenerate the viewer's SVG screenshots in screenshots/ from the fixed test scenes
screenshots:
    python -m tests.tui.screenshots

# Sample journals in journals/ made by running the real agent (complete, killed mid-call, fork, torn tail)
samples:
    python -m tests.tui.samples journals

# The whole test suite (the README's test command)
test *ARGS:
    python -m pytest {{ARGS}}

# Ruff and mypy --strict on the package; actionlint on the GitHub workflows
lint:
    ruff check wren_tui tests
    ruff format --check wren_tui
    mypy wren_tui
    python -m tests.docs_check
    actionlint

# The sdist and the Linux wheels a package index takes (manylinux2014 x86_64 and aarch64, cp311-abi3) in dist/
wheel OUT="dist":
    python -m tests.wheel {{OUT}}

# Benchmarks: ratios against baselines measured in the same run
bench:
    python -m tests.bench

# The reliability suite with many more examples and iterations (WREN_TORTURE=1)
torture *ARGS:
    WREN_TORTURE=1 python -m pytest tests/reliability tests/journal/test_properties.py tests/journal/test_fork_model.py tests/agent/test_redact_split.py tests/fleet/test_crashes.py -q {{ARGS}}

# Realistic journals for benchmarks: 10k, 100k and 1M events (about 400 MB) in bench-data/
bench-data DIR="bench-data":
    python -m tests.bench.gen {{DIR}}

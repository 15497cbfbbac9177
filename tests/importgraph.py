"""The import graph of a package, read from its source with `ast`, and the two checks made on it.

Every `import` and `from ... import` counts, wherever it is (in a function, under TYPE_CHECKING),
relative imports resolved; so do `importlib.import_module("name")` and a child process started
as `python -m name` (of a package: its `__main__`). Importing a module also runs its parent
packages' `__init__`, so those count too.

One exception, names loaded on first use: a package `__init__` with a module-level `__getattr__`
that imports what its `if TYPE_CHECKING:` block names (the journal's writer and fork). There those
imports are not the package's: they are made by whoever asks for such a name (`from pkg import
name`, `pkg.name`, `from pkg import *`). The check trusts `__getattr__` to load nothing else (for
wren_tui.journal, tests/journal/test_public_api.py checks that it loads exactly those).

- `layer_violations`: each module belongs to the layer of the longest prefix naming it in a table;
  an import from one layer into another must be allowed by a second table.
- `writers_in`: the modules, among some, with a call that opens a file for writing or changes a
  folder (`os.open` with a write or create flag, `open` in a w/a/x/+ mode, `Path.write_text`,
  `os.replace`, `shutil.copy`...), or that starts a program it cannot see into. The check reads
  calls, not values: a flag or a mode it cannot read as constants counts as writing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# os.open flags that only read.
READ_FLAGS = frozenset(
    {"O_RDONLY", "O_CLOEXEC", "O_NOFOLLOW", "O_NONBLOCK", "O_DIRECTORY", "O_NOATIME", "O_NOCTTY", "O_PATH"}
    | {"O_BINARY"}  # Windows' own: no text-mode translation of what is read
)
# Calls that write, create, remove or rename whatever they are given (resolved through import aliases).
WRITING_CALLS = frozenset(
    {f"os.{name}" for name in ("replace", "rename", "renames", "unlink", "remove", "removedirs", "rmdir", "mkdir")}
    | {f"os.{name}" for name in ("makedirs", "truncate", "ftruncate", "write", "pwrite", "writev", "pwritev")}
    | {f"os.{name}" for name in ("symlink", "link", "chmod", "fchmod", "lchmod", "chown", "fchown", "lchown")}
    | {f"os.{name}" for name in ("mkfifo", "mknod", "utime", "sendfile", "copy_file_range", "posix_fallocate")}
    | {f"os.{name}" for name in ("setxattr", "removexattr")}
    | {f"shutil.{name}" for name in ("copy", "copy2", "copyfile", "copytree", "copymode", "copystat", "move")}
    | {f"shutil.{name}" for name in ("rmtree", "make_archive", "unpack_archive", "chown")}
    | {f"tempfile.{name}" for name in ("mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile")}
    | {"tempfile.SpooledTemporaryFile", "tempfile.TemporaryDirectory", "logging.FileHandler"}
)
# Methods that write whatever object they are called on (Path's).
WRITING_METHODS = frozenset(
    {"write_text", "write_bytes", "touch", "mkdir", "rmdir", "unlink", "rename", "symlink_to", "hardlink_to"}
    | {"chmod", "lchmod"}
)
# Calls that start another program.
STARTING_CALLS = frozenset(
    {f"subprocess.{name}" for name in ("run", "Popen", "call", "check_call", "check_output", "getoutput")}
    | {f"os.{name}" for name in ("system", "popen", "posix_spawn", "posix_spawnp", "fork", "forkpty")}
    | {f"os.{name}" for name in ("execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe")}
    | {f"os.{name}" for name in ("spawnv", "spawnve", "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnvp")}
    | {"os.spawnvpe", "pty.spawn", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"}
)


@dataclass
class Module:
    name: str
    path: Path
    imports: dict[str, int] = field(default_factory=dict)  # module of ours -> first line importing it
    writes: list[str] = field(default_factory=list)  # "line N: what"
    # A package's names loaded on first use: name -> (its module, the line naming it).
    lazy: dict[str, tuple[str, int]] = field(default_factory=dict)
    # Dotted names of ours this module asks for (`from x import name`, `x.name`) -> first line.
    names: dict[str, int] = field(default_factory=dict)


def scan(package_dir: Path) -> dict[str, Module]:
    """Every module of the package in `package_dir` (named as its folder), with what it imports and writes."""
    root = package_dir.name
    files = {_module_name(path, package_dir, root): path for path in sorted(package_dir.rglob("*.py"))}
    packages = {name for name, path in files.items() if path.name == "__init__.py"}
    modules = {name: Module(name, path) for name, path in files.items()}
    for name, module in modules.items():
        tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
        reader = _Reader(module, name in packages, set(files))
        reader.visit(tree)
        reader.settle(tree)
        # Importing a module runs its parents' __init__ first.
        for parent in _parents(name):
            module.imports.setdefault(parent, 0)
    # A name loaded on first use is imported by whoever asks for it.
    lazy = {name: module.lazy for name, module in modules.items() if module.lazy}
    for module in modules.values():
        for dotted, line in module.names.items():
            package, _, attr = dotted.rpartition(".")
            table = lazy.get(package, {})
            asked = list(table.values()) if attr == "*" else [table[attr]] if attr in table else []
            for target, _line in asked:
                module.imports.setdefault(target, line)
    return modules


def _module_name(path: Path, package_dir: Path, root: str) -> str:
    parts = path.relative_to(package_dir).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((root, *parts))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


class _Reader(ast.NodeVisitor):
    def __init__(self, module: Module, is_package: bool, ours: set[str]) -> None:
        self.module = module
        self.package = module.name if is_package else module.name.rpartition(".")[0]
        self.ours = ours
        self.aliases: dict[str, str] = {}  # local name -> the dotted name it stands for
        self.is_package = is_package
        self.type_only: list[tuple[str, str, int]] = []  # (name, module, line) imported under TYPE_CHECKING
        self.loader_line: int | None = None  # a run-time import in a package's module-level __getattr__
        self._in_getattr = False
        self._top: list[ast.stmt] = []  # the module's top-level statements

    # --- imports --------------------------------------------------------------------------

    def _imports(self, name: str, line: int) -> None:
        for candidate in [*_parents(name), name]:
            if candidate in self.ours:
                self.module.imports.setdefault(candidate, line)

    def settle(self, tree: ast.Module) -> None:
        """After the visit: a package with a module-level `__getattr__` loads its TYPE_CHECKING names on first use."""
        lazy = any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.body)
        for name, target, line in self.type_only:
            if lazy:
                self.module.lazy[name] = (target, line)
            else:
                self._imports(target, line)
        if self.loader_line is not None and not self.module.lazy:
            self._writes_at(self.loader_line, "imports a module it names at run time; the check cannot see which")

    def visit_If(self, node: ast.If) -> None:
        test = ast.unparse(node.test)
        if not (self.is_package and test in ("TYPE_CHECKING", "typing.TYPE_CHECKING") and node in self._top):
            self.generic_visit(node)
            return
        for statement in node.body:
            if isinstance(statement, ast.ImportFrom):
                base = self._base(statement)
                for alias in statement.names:
                    target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in self.ours else base
                    self.type_only.append((alias.asname or alias.name, target, statement.lineno))
            else:
                self.visit(statement)
        for statement in node.orelse:
            self.visit(statement)

    def visit_Module(self, node: ast.Module) -> None:
        self._top = node.body
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        outer = self._in_getattr
        self._in_getattr = node.name == "__getattr__" and self.is_package and node in self._top
        self.generic_visit(node)
        self._in_getattr = outer

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = self._dotted(node)
        if dotted is not None and dotted.partition(".")[0] == self.package.partition(".")[0]:
            self.module.names.setdefault(dotted, node.lineno)
        self.generic_visit(node)

    def _base(self, node: ast.ImportFrom) -> str:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".")
            parent = ".".join(parts[: len(parts) - node.level + 1])
            base = f"{parent}.{base}" if base else parent
        return base

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._imports(alias.name, node.lineno)
            local = alias.asname or alias.name.partition(".")[0]
            self.aliases[local] = alias.name if alias.asname else local

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._base(node)
        self._imports(base, node.lineno)
        for alias in node.names:
            self._imports(f"{base}.{alias.name}", node.lineno)
            self.module.names.setdefault(f"{base}.{alias.name}", node.lineno)
            self.aliases[alias.asname or alias.name] = f"{base}.{alias.name}"

    # --- calls ----------------------------------------------------------------------------

    def _dotted(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def _writes(self, node: ast.AST, what: str) -> None:
        self._writes_at(getattr(node, "lineno", 0), what)

    def _writes_at(self, line: int, what: str) -> None:
        self.module.writes.append(f"line {line}: {what}")

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        name = self._dotted(node.func)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if name in ("importlib.import_module", "__import__"):
            self._dynamic_import(node)
        elif name == "os.open":
            self._flags(node, _argument(node, 1, "flags"), "os.open")
        elif name in ("open", "io.open", "builtins.open", "os.fdopen"):
            self._mode(node, _argument(node, 1, "mode"), name)
        elif name in WRITING_CALLS:
            self._writes(node, name)
        elif name in STARTING_CALLS:
            self._child(node, name)
        elif method == "open":
            self._other_open(node)
        elif method in WRITING_METHODS:
            self._writes(node, f".{method}()")
        elif method == "replace" and len(node.args) == 1 and not node.keywords:
            self._writes(node, ".replace(target)")  # Path.replace; str.replace takes two

    def _dynamic_import(self, node: ast.Call) -> None:
        target = _argument(node, 0, "name")
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            self._imports(target.value, node.lineno)
        elif self._in_getattr:
            self.loader_line = node.lineno  # settled after the visit: names loaded on first use, or unseen
        else:
            self._writes(node, "imports a module it names at run time; the check cannot see which")

    def _flags(self, node: ast.Call, flags: ast.expr | None, what: str) -> None:
        if flags is None:
            return
        names = _flag_names(flags)
        unknown = [n for n in names if not n.startswith("O_")]
        writing = [n for n in names if n.startswith("O_") and n not in READ_FLAGS]
        if unknown:
            self._writes(node, f"{what} with flags the check cannot read ({', '.join(unknown)})")
        elif writing:
            self._writes(node, f"{what} with {', '.join(writing)}")

    def _mode(self, node: ast.Call, mode: ast.expr | None, what: str) -> None:
        if mode is None:
            return  # "r"
        if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
            self._writes(node, f"{what} in a mode the check cannot read")
        elif set(mode.value) & set("wax+"):
            self._writes(node, f"{what} in mode {mode.value!r}")

    def _other_open(self, node: ast.Call) -> None:
        """`x.open(...)`: Path.open(mode), io-style open(file, mode), or os-style open(path, flags)."""
        mode = _argument(node, -1, "mode")
        if mode is None and node.args and isinstance(node.args[0], ast.Constant):
            mode = node.args[0]
        elif mode is None and len(node.args) >= 2:
            second = node.args[1]
            if not (isinstance(second, ast.Constant) and isinstance(second.value, str)):
                self._flags(node, second, ".open")
                return
            mode = second
        self._mode(node, mode, ".open")

    def _child(self, node: ast.Call, what: str) -> None:
        """A child started as `python -m MODULE` runs our module (it joins the graph); any other is unseen."""
        command = node.args[0] if node.args else None
        if isinstance(command, ast.List | ast.Tuple):
            words = command.elts
            for index, word in enumerate(words[:-1]):
                if isinstance(word, ast.Constant) and word.value == "-m":
                    target = words[index + 1]
                    if isinstance(target, ast.Name) and target.id == "__name__":
                        self._imports(self.module.name, node.lineno)
                        return
                    if isinstance(target, ast.Constant) and target.value in self.ours:
                        # `python -m PACKAGE` runs the package's __main__ (after its __init__).
                        main = f"{target.value}.__main__"
                        self._imports(main if main in self.ours else str(target.value), node.lineno)
                        return
        self._writes(node, f"{what} starts a program the check cannot see into")


def _flag_names(node: ast.expr) -> list[str]:
    """The names or-ed together in an os.open flags expression (`os.O_RDONLY | O_CLOEXEC`); anything else as is."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flag_names(node.left) + _flag_names(node.right)
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Constant) and node.value == 0:
        return ["O_RDONLY"]
    return [ast.unparse(node)]


def _argument(node: ast.Call, index: int, keyword: str) -> ast.expr | None:
    for kw in node.keywords:
        if kw.arg == keyword:
            return kw.value
    if 0 <= index < len(node.args) and not isinstance(node.args[index], ast.Starred):
        return node.args[index]
    return None


# --- the checks -------------------------------------------------------------------------------


def layer_of(name: str, layers: Mapping[str, str]) -> str | None:
    """The layer of the longest prefix in `layers` that names `name` or a package holding it.

    The top package's own name (no dot) stands only for its `__init__`, so a new subpackage that
    is in no layer is said to be, not taken into the top package's.
    """
    best = max((p for p in layers if name == p or ("." in p and name.startswith(p + "."))), key=len, default=None)
    return None if best is None else layers[best]


def layer_violations(
    modules: Mapping[str, Module], layers: Mapping[str, str], allowed: Mapping[str, Iterable[str]]
) -> list[str]:
    """Every import against the tables, and every module that is in no layer, as sentences."""
    found: list[str] = []
    for name, module in sorted(modules.items()):
        mine = layer_of(name, layers)
        if mine is None:
            found.append(f"{name} is in no layer: add it to the layer table")
            continue
        may = {mine, *allowed[mine]}
        # A name loaded on first use is checked as the package's own import too: its layer may not reach it.
        lazy = {target: line for target, line in module.lazy.values()}
        for target, line in sorted({**lazy, **module.imports}.items()):
            theirs = layer_of(target, layers)
            if theirs is not None and theirs not in may and line:
                found.append(f"{name} ({mine}) imports {target} ({theirs}) at line {line}")
    return found


def closure(modules: Mapping[str, Module], roots: Iterable[str], without: Iterable[str] = ()) -> set[str]:
    """The modules `roots` load, transitively, with the modules in `without` (and what only they load) cut out."""
    cut = set(without)
    seen: set[str] = set()
    todo = [root for root in roots if root not in cut]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(target for target in modules[name].imports if target not in cut and target not in seen)
    return seen


def writers_in(modules: Mapping[str, Module], names: Iterable[str]) -> list[str]:
    """What each of `names` does that could write, as sentences."""
    return [f"{name} {what}" for name in sorted(names) for what in modules[name].writes]

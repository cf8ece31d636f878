"""Which layer imports which: pyproject.toml's import contracts, checked statically over every file
by import-linter, and the lazy imports that only a run can see (what is imported, and when)."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold_in_every_file():
    """[tool.importlinter] in pyproject.toml, function-level imports included: the CLI, the app, the
    coach, the AI layer and the engine each import only the layers below them (the leak guard in
    ai/ once imported the coach's static rules, which now live in the engine); the engine, the AI
    layer and the coach never import textual."""
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "lint-imports is missing beside this Python: pip install -e '.[test]'"
    result = subprocess.run([lint_imports, "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"an import contract is broken:\n{result.stdout}{result.stderr}"


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_ai_and_coach_layers_do_not_import_litellm_until_a_model_is_called():
    mods = _modules_after("import tutor.ai.config, tutor.ai.llm, tutor.ai.hints, tutor.ai.leakguard, "
                          "tutor.coach.verify, tutor.engine.loading.static_rules")
    assert "litellm" not in mods


def test_listing_puzzles_does_not_import_numba():
    mods = _modules_after("import tutor.cli\nfrom tutor.puzzles import load_catalog\nload_catalog()")
    assert "numba" not in mods and "litellm" not in mods


def test_the_app_starts_without_numba_numpy_or_litellm():
    mods = _modules_after("import tutor.app.app")
    assert not {"numba", "numpy", "litellm"} & mods


def _imports_of_every_module(package: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports, at the top or inside a function."""
    import ast

    names = {}
    for f in package.rglob("*.py"):
        parts = f.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {m: set() for m in names}
    for m, f in names.items():
        here = m if f.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = here.split(".")[:len(here.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                found = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            else:
                continue
            graph[m] |= {t for t in found if t in names and t != m}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    out: list = []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_itself_back():
    """An import circle (fakecuda -> compile -> loader -> fakecuda was one) means no module of it can
    be read, tested or changed alone; function-level imports count, since they only hide it."""
    cycles = _cycles(_imports_of_every_module(ROOT / "tutor"))
    assert not cycles, f"import circles: {cycles}"

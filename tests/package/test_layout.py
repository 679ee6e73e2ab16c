"""The package's layering, checked on its source: every game has the same role modules, the
store knows no game, the CLI is argparse only, nothing runs a game module as a script, and the
import graph has no cycle."""

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "strongsolve"
ROOT = SRC.parents[1]
GAMES = ("g2048", "truco", "ludo", "shutbox")
ROLES = ("rules", "encoding", "stages", "saved", "advice", "hints")


def modules():
    """Dotted name -> path of every module of the package."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports(name, path, known):
    """The package's modules that module ``name`` imports (at its top or inside a function)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def test_every_game_has_the_same_role_modules():
    for game in GAMES:
        for role in ROLES:
            base = SRC / "games" / game / role
            assert base.with_suffix(".py").is_file() or (base / "__init__.py").is_file(), \
                f"games/{game} has no {role} module"
        assert (SRC / "games" / game / "advice.py").read_text().count("def advise_position(") == 1


def test_the_import_graph_has_no_cycle():
    known = modules()
    graph = {name: imports(name, path, known) for name, path in known.items()}
    state = {}  # name -> 1 visiting, 2 done

    def visit(name, trail):
        state[name] = 1
        for dep in sorted(graph[name]):
            if state.get(dep) == 1:
                cycle = trail[trail.index(dep):] + [dep]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep, trail + [dep])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_layers_import_only_downwards():
    known = modules()
    for name, path in known.items():
        deps = imports(name, path, known)
        if name.startswith(("strongsolve.store", "strongsolve.kernels", "strongsolve.codecs")):
            assert not {d for d in deps if d.startswith("strongsolve.games")}, name
        if name.startswith(("strongsolve.lab", "strongsolve.games")):
            assert not {d for d in deps if d.startswith("strongsolve.commands")}, name


def test_the_store_names_no_game_and_no_workflow_rule():
    for path in (SRC / "store").glob("*.py"):
        text = path.read_text()
        for game in GAMES:
            assert game not in text, f"{path.name} names {game}"
        assert not re.search(r"--forcerun|\b(g2048|truco|ludo|shutbox)_\w+", text), path.name


def test_a_module_over_500_lines_says_why():
    for path in SRC.rglob("*.py"):
        if path.parent.name in ("kernels", "codecs"):
            continue
        text = path.read_text()
        if text.count("\n") > 500:
            doc = ast.get_docstring(ast.parse(text)) or ""
            assert "Why one module of more than 500 lines" in doc, path.relative_to(SRC)


def test_no_game_module_runs_as_a_script():
    for path in (SRC / "games").rglob("*.py"):
        assert "__main__" not in path.read_text(), path
    for path in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]:
        assert "python -m strongsolve" not in path.read_text(), path


def test_no_words_of_how_the_code_was_made():
    pattern = re.compile(r"session [0-9]|issues? [0-9]", re.IGNORECASE)
    paths = [ROOT / "Snakefile", *(ROOT / "workflow").rglob("*.smk"), *(ROOT / "workflow").rglob("*.yaml"),
             *SRC.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    found = [f"{p.relative_to(ROOT)}:{i}" for p in paths
             for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not found, found[:20]

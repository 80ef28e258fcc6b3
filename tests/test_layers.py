"""The package's layers (docs/architecture.md#layers): a module imports only from lower layers.

Every ``import`` of ``zoo`` counts, at module level or inside a function; imports under
``if TYPE_CHECKING:`` (annotations only) do not. A unit is a top-level module or subpackage of
``zoo`` (``zoo/fields/ltc/cell.py`` belongs to ``fields``); imports within a unit are free.
"""

from __future__ import annotations

import ast
from pathlib import Path

import zoo

ROOT = Path(zoo.__file__).resolve().parent

#: top to bottom; a unit may import the units of any lower layer, none of its own or above
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),  # python -m zoo
    ("cli",),  # the `zoo` command
    ("zoo",),  # the package facade: zoo.run_spec, zoo.load_model (imported on first use)
    ("search",),  # hyperparameter search; its trials run through sweep's executors
    ("sweep", "report"),  # seed sweeps; paper tables side by side
    ("runner",),  # one `zoo run`
    ("serving",),  # the logged MLflow pyfunc model
    ("predict",),  # zoo.load_model, zoo predict / evaluate
    ("predict_frame",),  # new data read as the training data was
    ("plots",),  # learning curves
    ("training",),  # the training loop, optimiser recipe, checkpoints
    ("spec",),  # the spec model and its validation (which builds a model to count parameters)
    ("results",),  # the published-results registry (a spec's `reproduces:`), finished runs
    ("model", "datasets"),  # ZooModel = control + field body + readout; the built-in datasets
    ("plugin",),  # the plugin API: base configs, protocols, helpers (some loaded on first use)
    ("fast",),  # fast paths, by model family; attached to the bodies they serve
    ("fields",),  # the built-in fields and their bodies
    ("kernels",),  # compiled C++ kernels and the elementary operations on them
    ("controls", "solvers", "backprop", "readouts", "data"),  # built-in components; data files
    ("registry",),  # components discovered from entry points
    ("components",),  # the extension contracts
    ("build_context",),  # what a field needs to build itself
    ("series", "dense", "tracking", "located_yaml", "outputs"),  # data as tensors; dense
    # layers; MLflow logging; YAML with the location of every value; files a command writes
    ("errors", "limits", "suggest", "filemodes", "tables", "durations", "version"),  # shared
    # basics
)

#: (importer, imported): reason. The only imports allowed against the layers.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = ["zoo", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (ROOT / rel).with_suffix(".py").is_file() or (ROOT / rel / "__init__.py").is_file()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def zoo_imports(path: Path) -> list[tuple[str, int]]:
    """The ``zoo`` modules that a file imports, with the line of each import."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            for alias in node.names:  # `from . import runner` imports the module zoo.runner
                sub = f"{module}.{alias.name}"
                found.append((sub if _is_module(sub) else module, node.lineno))
    return [(m, line) for m, line in dict.fromkeys(found) if m == "zoo" or m.startswith("zoo.")]


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "zoo"


def _layer_of() -> dict[str, int]:
    return {unit: depth for depth, layer in enumerate(LAYERS) for unit in layer}


def _files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_unit_has_a_layer():
    layer = _layer_of()
    units = {_unit(_module_name(p)) for p in _files()}
    assert units - set(layer) == set(), "add these to LAYERS in tests/test_layers.py"
    assert set(layer) - units == set(), "LAYERS names units that do not exist"
    assert sum(len(units) for units in LAYERS) == len(layer), "a unit is in two layers"


def violations() -> list[str]:
    layer = _layer_of()
    found = []
    for path in _files():
        importer = _module_name(path)
        for imported, line in zoo_imports(path):
            a, b = _unit(importer), _unit(imported)
            if a == b or layer[a] < layer[b] or (a, b) in EXCEPTIONS:
                continue
            rule = ("same layer" if layer[a] == layer[b] else "imports upward") + \
                f": {a} is in layer {LAYERS[layer[a]]}, {b} in {LAYERS[layer[b]]}"
            found.append(f"{importer} (line {line}) imports {imported}; {rule}")
    return found


def test_imports_follow_the_layers():
    problems = violations()
    assert not problems, ("imports against the layers (tests/test_layers.py LAYERS; move the "
                          "shared code down, or declare an exception with its reason):\n  "
                          + "\n  ".join(problems))


def test_exceptions_are_still_needed():
    layer = _layer_of()
    used = {(_unit(_module_name(p)), _unit(m)) for p in _files() for m, _ in zoo_imports(p)}
    for (a, b), reason in EXCEPTIONS.items():
        assert reason.strip(), f"exception {a} -> {b} needs a reason"
        assert layer[a] >= layer[b], f"{a} -> {b} follows the layers: drop the exception"
        assert (a, b) in used, f"{a} no longer imports {b}: drop the exception"


#: tests that check the whole product rather than one part of the package, with what they check
CROSS_CUTTING: dict[str, str] = {
    "test_layers.py": "the layers above, and this layout of the tests",
    "test_lint.py": "ruff over zoo and tests",
    "test_failures.py": "bad input of every kind, end to end through the CLI",
    "test_quickstart.py": "the README's commands",
    "test_ui_browser.py": "the MLflow UI in a real browser",
    "test_bench_report.py": "the benchmark scripts under bench/",
    "test_own_data_page.py": "the walk-through docs/own-data.md, run as written",
    "test_sources.py": "docs/sources.md against the code that cites it",
}
#: test folders that are not a zoo unit: the shipped specs, and the spec corpus of the error tests
OTHER_FOLDERS = {"specs": "the shipped specs under specs/", "corpus": "specs that must fail"}


def test_tests_mirror_the_package():
    """Tests of ``zoo/<unit>/`` live in ``tests/<unit>/``; a test of a top-level module
    ``zoo/<module>.py`` is ``tests/test_<module>[_<topic>].py``; the rest is named above."""
    tests = Path(__file__).resolve().parent
    units = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in ROOT.glob("*.py") if p.stem not in ("__init__", "__main__")}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - units - set(OTHER_FOLDERS) == set(), "test folders that mirror no zoo unit"
    stray = [p.name for p in tests.glob("test_*.py") if p.name not in CROSS_CUTTING
             and not any(p.stem == f"test_{m}" or p.stem.startswith(f"test_{m}_")
                         for m in modules)]
    assert stray == [], ("top-level tests that name no zoo module: move them to the folder of "
                         "their unit, or add them to CROSS_CUTTING with what they check")

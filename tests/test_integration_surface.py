"""The integration kernel stays small (issue 49): ``camab_rag.integration`` exports at
most 20 names, lives in at most 5 modules, and each framework adapter under
``integrations/`` imports at most 20 names of the core at run time (names imported only
for type checking, under ``if TYPE_CHECKING:``, are counted apart and capped at 30).
Counted from the source with ``ast``: no adapter needs to be installed."""

from __future__ import annotations

import ast
from pathlib import Path

import camab_rag.integration as integration

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = sorted(p for p in (ROOT / "integrations").iterdir() if (p / "pyproject.toml").exists())


def _core_names(adapter: Path) -> tuple[set[str], set[str]]:
    """The names an adapter's package (not its tests) imports from ``camab_rag``: those
    imported at run time, and those imported only under ``if TYPE_CHECKING:``."""
    runtime: set[str] = set()
    typing_only: set[str] = set()
    for path in adapter.rglob("*.py"):
        if "tests" in path.relative_to(adapter).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for statement in block.body
            for node in ast.walk(statement)
        }
        for node in ast.walk(tree):
            names: set[str] = set()
            if (
                isinstance(node, ast.ImportFrom)
                and (node.module or "").split(".")[0] == "camab_rag"
            ):
                names = {alias.name for alias in node.names}
            elif isinstance(node, ast.Import):
                names = {a.name for a in node.names if a.name.split(".")[0] == "camab_rag"}
            (typing_only if id(node) in guarded else runtime).update(names)
    return runtime, typing_only - runtime


def test_the_kernel_exports_at_most_20_names_from_at_most_5_modules() -> None:
    exported = list(integration.__all__)
    assert len(exported) == len(set(exported)) <= 20, exported
    assert all(hasattr(integration, name) for name in exported)
    modules = list(Path(integration.__file__).parent.glob("*.py"))
    assert len(modules) <= 5, sorted(m.name for m in modules)


def test_each_adapter_imports_at_most_20_names_of_the_core() -> None:
    assert len(ADAPTERS) == 4, ADAPTERS
    for adapter in ADAPTERS:
        runtime, typing_only = _core_names(adapter)
        assert len(runtime) <= 20, (adapter.name, sorted(runtime))
        assert len(runtime | typing_only) <= 30, (adapter.name, sorted(typing_only))
    langchain, _ = _core_names(ROOT / "integrations" / "langchain-camab")
    assert "Runs" in langchain  # the count reads real imports, not nothing


def test_no_public_steps_generator_in_the_kernel_or_the_door() -> None:
    """Public operations are ``x()``/``ax()``: the ``*_steps`` generators are private."""
    import camab_rag.attributor as door

    for module in (door, integration):
        public = [
            n
            for n, value in vars(module).items()
            if n.endswith("_steps") and not n.startswith("_")
            if getattr(value, "__module__", None) == module.__name__
            or n in getattr(module, "__all__", ())
        ]
        assert public == [], (module.__name__, public)


def test_pending_is_generic_in_what_it_resolves_to() -> None:
    """``Pending[T]``: the kernel keeps ``Pending[AttributionResult]`` handles, no casts."""
    from camab_rag.attributor import Pending

    assert Pending[int] is not Pending  # subscriptable: typed handles
    adapters = ROOT / "integrations"
    casts = [p for p in adapters.rglob("*.py") if "cast(AttributionResult" in p.read_text()]
    assert casts == [], casts

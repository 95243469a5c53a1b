"""Every outside package the service imports comes with its declared, pinned dependencies in pyproject.toml
(declared itself, or required by one that is), so a fresh `pip install -e .` has it: `cryptography` was
imported and came only with test tools."""

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What `pip install -e .` installs and runs (bench/ and tests/ have their own extras).
SERVICE = (
    "app.py",
    "serving.py",
    "blueprints",
    "models",
    "rules",
    "schemas",
    "services",
    "cli",
    "fakeplatform",
    "agentmcp",
)
OWN = {"app", "serving", "blueprints", "models", "rules", "schemas", "services", "cli", "fakeplatform", "agentmcp"}


def _name(requirement):
    return re.split(r"[=<>!~\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _installed_with(names):
    """`names` and every distribution they require (extras left out), as pip installs them."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            wanted = requires(name) or []
        except PackageNotFoundError:
            continue
        todo += [_name(r) for r in wanted if "extra ==" not in r.partition(";")[2]]
    return seen


def _imported():
    found = {}
    for entry in SERVICE:
        path = ROOT / entry
        for source in [path] if path.is_file() else sorted(path.rglob("*.py")):
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                names = (
                    [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module]
                    if isinstance(node, ast.ImportFrom) and node.module and not node.level
                    else []
                )
                for name in names:
                    top = name.split(".")[0]
                    if top not in OWN and top not in sys.stdlib_module_names:
                        found.setdefault(top, source.relative_to(ROOT))
    return found


def test_every_imported_package_is_declared_and_pinned():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {_name(r): r for r in project["dependencies"]}
    optional = {_name(r) for r in project["optional-dependencies"]["postgres"]}  # DATABASE_URL's driver
    installed = _installed_with(set(declared) | optional)
    distributions = packages_distributions()
    missing = []
    for module, where in _imported().items():
        names = {_name(d) for d in distributions.get(module, [module])}
        if not names & installed:
            missing.append(f"{module} ({where})")
    assert missing == []
    assert "cryptography" in declared
    assert all("==" in requirement for requirement in declared.values()), declared

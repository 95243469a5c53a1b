"""The code's shape holds: import layers and no loops (import-linter, every import counted wherever it
stands), no project import hidden in a function or behind `except ImportError`, ruff, and mypy over all
production code. The same checks run from .pre-commit-config.yaml."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agentmcp", "blueprints", "cli", "fakeplatform", "models", "rules", "schemas", "services")
PROJECT = (*PACKAGES, "app", "serving")


def _run(*command):
    done = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def _present(names):
    return [name for name in names if (ROOT / name / "__init__.py").exists()]


def test_import_contracts_hold():
    """Layers app/cli > blueprints > services > schemas | models > rules; fakeplatform stands alone."""
    done = subprocess.run(
        [Path(sys.executable).with_name("lint-imports")], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    code, out = done.returncode, done.stdout + done.stderr
    assert code == 0, out


def test_no_import_loops_between_modules():
    """Module by module, function-level imports included: a loop means one side cannot stand alone."""
    graph = grimp.build_graph(*_present(PACKAGES), include_external_packages=False)
    loops = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            # A package importing its own children is how Python packages re-export; not a loop.
            if imported.startswith(module + "."):
                continue
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                loops.append(" -> ".join((module, *back)))
    assert loops == []


def _project_imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name.split(".")[0] in PROJECT for name in names):
            yield node


def _sources():
    for name in _present(PACKAGES):
        yield from sorted((ROOT / name).rglob("*.py"))
    yield from (path for path in (ROOT / "app.py", ROOT / "serving.py") if path.exists())


def test_project_imports_stand_at_module_level():
    """An import inside a function or a try hides a dependency from the reader (and once hid a loop)."""
    hidden = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        top = {id(node) for node in tree.body}
        for node in _project_imports(tree):
            if id(node) not in top:
                hidden.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert hidden == []


def _unannotated(path):
    """Public functions and methods of `path` missing a parameter or return annotation."""
    tree = ast.parse(path.read_text(), str(path))
    scopes = [tree] + [node for node in tree.body if isinstance(node, ast.ClassDef) and not node.name.startswith("_")]
    for scope in scopes:
        for node in scope.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name.startswith("_"):
                continue
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            if scope is not tree and args and args[0].arg in ("self", "cls"):
                args = args[1:]
            args += [a for a in (node.args.vararg, node.args.kwarg) if a]
            if node.returns is None or any(a.annotation is None for a in args):
                yield f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"


def test_every_service_and_model_entry_point_is_typed():
    """What other layers call carries its types, which mypy then checks."""
    missing = [
        place
        for name in ("services", "models")
        for path in sorted((ROOT / name).rglob("*.py"))
        for place in _unannotated(path)
    ]
    assert missing == []


# peewee's own private members (docs/api.md §17): a pinned upgrade may change them without notice.
PEEWEE_PRIVATE = {"__data__", "_dirty", "_populate_unsaved_relations", "_pk", "_schema", "_meta", "__rel__"}
STORE_CLASSES = {"SqliteDatabase", "PostgresqlDatabase", "PooledSqliteDatabase", "PooledPostgresqlDatabase"}


def _outside_models():
    return [path for path in _sources() if not path.is_relative_to(ROOT / "models")]


def test_peewee_private_members_stay_inside_models():
    """Services, views and commands use peewee's public API (ordinary queries and save())."""
    leaks = [
        f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}"
        for path in _outside_models()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in PEEWEE_PRIVATE
    ]
    assert leaks == []


# Inside models/ too (issue 36): peewee's internals (a database's settings, its connection state, a
# row's data) and names of our own hung on its database object. `_meta` is peewee's documented model
# metadata, allowed in models/. An object's own `self._x` is not peewee's.
PEEWEE_INTERNALS = PEEWEE_PRIVATE - {"_meta"} | {
    "_pragmas",
    "_timeout",
    "_state",
    "_local",
    "_conn",
    "_lock",
    "_database",
    "_connect",
    "_initialize_connection",
}
DATABASE_NAMES = {"db", "database"}


def _peewee_internals(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in PEEWEE_INTERNALS
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            yield f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}"
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        receivers = [target.value for target in targets if isinstance(target, ast.Attribute)]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" and node.args:
            receivers.append(node.args[0])
        if any(
            (isinstance(receiver, ast.Name) and receiver.id in DATABASE_NAMES)  # db.x = ..., db.obj.x = ...
            or (isinstance(receiver, ast.Attribute) and receiver.attr == "obj")
            for receiver in receivers
        ):
            yield f"{path.relative_to(ROOT)}:{node.lineno}: an attribute set on a database object"


def test_no_peewee_private_members_anywhere():
    """Production code, models/ included, uses peewee's public API (connect()'s arguments, not a database's
    private fields) and keeps its own state in its own objects."""
    leaks = [leak for path in _sources() for leak in _peewee_internals(path)]
    assert leaks == []


# No test replaces a private member of the web framework: it would test a framework that ships nowhere, and
# an upgrade changes one without notice (tests/helpers/routing.py does what such a patch once did).
FRAMEWORKS = ("flask", "werkzeug")


def _framework_patches(path):
    """`X._name = …` or `setattr(X, "_name", …)` (monkeypatch's too) on a name imported from the framework."""
    tree = ast.parse(path.read_text())
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in FRAMEWORKS
        for alias in node.names
    }
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        patched = [(target.value, target.attr) for target in targets if isinstance(target, ast.Attribute)]
        calls_setattr = isinstance(node, ast.Call) and "setattr" in (
            getattr(node.func, "attr", None),
            getattr(node.func, "id", None),
        )
        if calls_setattr and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            patched.append((node.args[0], node.args[1].value))
        for receiver, name in patched:
            private = isinstance(name, str) and name.startswith("_") and not name.endswith("__")
            if private and isinstance(receiver, ast.Name) and receiver.id in imported:
                yield f"{path.relative_to(ROOT)}:{node.lineno}: {receiver.id}.{name}"


def test_no_test_patches_a_private_member_of_the_framework():
    patches = [patch for path in sorted((ROOT / "tests").rglob("*.py")) for patch in _framework_patches(path)]
    assert patches == []


# Where the store classes may be named (docs/api.md §17): models/base.py builds the database from the
# settings, models/store.py is the seam every other module asks (on_sqlite(), the search, the write
# lock's PostgreSQL part, the copy's snapshot and id sequences, a backup archive's SQLite file).
STORE_SEAM = {"models/base.py", "models/store.py"}


def _store_class_names(path):
    return [
        f"{path.relative_to(ROOT)}:{node.lineno}: {getattr(node, 'attr', getattr(node, 'id', ''))}"
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.Attribute) and node.attr in STORE_CLASSES)
        or (isinstance(node, ast.Name) and node.id in STORE_CLASSES)
        or (isinstance(node, ast.alias) and node.name.rpartition(".")[2] in STORE_CLASSES)
    ]


def test_no_store_branch_outside_models():
    """What differs between SQLite and PostgreSQL is asked behind models/ (models/store.py), never in a
    service, a view or a command."""
    leaks = [leak for path in _outside_models() for leak in _store_class_names(path)]
    assert leaks == []


def test_store_classes_are_named_only_in_the_seam():
    """Inside models/ too, a module asks models/store.py instead of repeating isinstance checks."""
    leaks = [
        leak
        for path in _sources()
        if str(path.relative_to(ROOT)) not in STORE_SEAM
        for leak in _store_class_names(path)
    ]
    assert leaks == []


# Names that lead to the code (docs/api.md §17): a module says in its first line what it owns, and no
# generic word names two modules (three `images` and two `snapshot` modules once sent readers astray).
GENERIC_NAMES = {"images", "snapshot", "notifications", "migrate", "migration"}


def test_every_service_and_model_module_says_what_it_owns():
    modules = [path for name in ("services", "models") for path in sorted((ROOT / name).rglob("*.py"))]
    silent = [
        str(path.relative_to(ROOT))
        for path in modules
        if not (ast.get_docstring(ast.parse(path.read_text())) or "").strip()
    ]
    shared: dict[str, list[str]] = {}
    for path in modules:
        if path.stem in GENERIC_NAMES:
            shared.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    assert silent == [] and {stem: paths for stem, paths in shared.items() if len(paths) > 1} == {}


def test_ruff_passes():
    code, out = _run("ruff", "check", ".")
    assert code == 0, out


def test_ruff_format_leaves_nothing_to_change():
    code, out = _run("ruff", "format", "--check", ".")
    assert code == 0, out


@pytest.mark.timeout(600)
def test_mypy_passes_on_all_production_code():
    code, out = _run("mypy", *_present(PACKAGES), *(f"{name}.py" for name in ("app", "serving")))
    assert code == 0, out


# Citations lead inside the repository (docs/api.md §17): the rules are docs/api.md's, not a document
# beside the project that a clone does not have ("the spec", CONTRACT, ../shared), and every docs/ file,
# §N and §N "Subsection" cited exists, CHANGELOG.md included (a clone's reader has only the repository).
OUTSIDE_DOCUMENTS = re.compile(
    r"\bCONTRACT\b|service-spec|ARCHITECTURE\.md|/work/"
    r"|(?i:\bthe\s+(?:user's\s+)?spec(?:ification)?\b|\bspec(?::|'s\b|\s+rules?\b)|\(spec\)"
    r"|\bthe\s+contract\b|\bcontract's\b)"
)
OUTSIDE_PATH = re.compile(r"(?<![\w.])\.\./\w")  # tests send such paths on purpose: checked outside tests/
DOC_PATH = re.compile(r"\bdocs/[\w.-]+\.md\b")
SECTION = re.compile(r"§\s?(\d+)(?:\s+\"([^\"\n]+)\")?")
CITING = (".py", ".md", ".html", ".js", ".css", ".toml", ".cfg", ".conf", ".service", "Dockerfile")


def _cited_files():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [
        ROOT / name
        for name in tracked.splitlines()
        if name.endswith(CITING)
        and (ROOT / name).is_file()
        and "node_modules" not in name
        and (ROOT / name) != Path(__file__).resolve()
    ]


def _api_sections():
    """docs/api.md's sections: number -> the titles of its subsections and bold paragraphs."""
    sections: dict[int, list[str]] = {}
    for line in (ROOT / "docs/api.md").read_text().splitlines():
        if found := re.match(r"## (\d+)\. ", line):
            sections[int(found[1])] = []
        elif sections and (found := re.match(r"(?:###+ |\s*- \*\*|\*\*)(.+)", line)):
            sections[max(sections)].append(found[1])
    return sections


def _broken_references(name, text, sections):
    """`name`'s citations of a document outside the repository, a docs/ file or a §N that does not exist."""
    outside = [(found.start(), found[0]) for found in OUTSIDE_DOCUMENTS.finditer(text)]
    if not name.startswith("tests/"):
        outside += [(found.start(), found[0]) for found in OUTSIDE_PATH.finditer(text)]
    missing = [(found.start(), found[0]) for found in DOC_PATH.finditer(text) if not (ROOT / found[0]).is_file()]
    for found in SECTION.finditer(text):
        number, title = int(found[1]), found[2]
        if number not in sections or (title and not any(line.startswith(title) for line in sections[number])):
            missing.append((found.start(), found[0]))
    return [f"{name}:{text.count(chr(10), 0, start) + 1}: {words!r}" for start, words in outside + missing]


def test_every_cited_document_is_in_the_repository():
    sections = _api_sections()
    broken = [
        place
        for path in _cited_files()
        for place in _broken_references(str(path.relative_to(ROOT)), path.read_text(errors="replace"), sections)
    ]
    assert broken == []


def test_the_reference_check_sees_a_broken_citation():
    """The check above is only as good as its patterns: each kind of broken citation is caught."""
    sections = _api_sections()
    broken = [
        "as the spec says",
        "(spec: ReviewTask)",
        "the\nspec's rules",
        "CONTRACT §4",
        "see ../shared/x.md",
        "(spec rule 4)",
        "docs/xyz.md",
        f"docs/api.md §{max(sections) + 1}",
        '§4 "No such subsection"',
    ]
    assert all(_broken_references("services/x.py", text, sections) for text in broken)
    fine = 'docs/api.md §4 "Listing", docs/conventions.md, apispec\'s plugin'
    assert _broken_references("services/x.py", fine, sections) == []


# No CJK text in production Python (issue 36): words a page, a message or an article shows come from the
# catalogue in translations/ (docs/conventions.md); Chinese sample content lives in services/demo.py.
# fakeplatform/ is a test double that imitates the platform's and the robots' own Chinese errmsg, not
# the service's words. A literal is read as written, so a regex's ranges in \u escapes are no text.
CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u312f\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0002fa1f]"
)
CJK_ALLOWED = ("services/demo.py", "fakeplatform/")


def _cjk_literals(name, source):
    """String literals of `source` written with CJK characters, docstrings left out."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{name}:{node.lineno}: {ast.get_source_segment(source, node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and CJK.search(node.value)  # only then is the source read: get_source_segment is slow
        and CJK.search(ast.get_source_segment(source, node) or "")
    ]


def test_no_cjk_text_in_production_python():
    found = [
        literal
        for path in _sources()
        if not str(path.relative_to(ROOT)).startswith(CJK_ALLOWED)
        for literal in _cjk_literals(str(path.relative_to(ROOT)), path.read_text())
    ]
    assert found == []


def test_the_cjk_check_sees_a_literal_but_not_a_docstring_or_an_escape():
    source = "\n".join(
        (
            '"""模块"""',
            'LABEL = "参考资料"',
            "def f():",
            '    """函数"""',
            '    return f"{1}在看"  # 注释',
            'RANGE = "[\\u4e00-\\u9fff]"',
            "",
        )
    )
    assert [line.split(":")[1] for line in _cjk_literals("x.py", source)] == ["2", "5"]


def test_no_test_module_imports_another_test_module():
    """Fixtures live in conftest.py files and builders in tests/helpers/: a test module that imports
    another (or a conftest's helpers) ties the two together, and renaming one silently breaks the other."""
    imports = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            if any(
                name.startswith("tests.")
                and (name.rpartition(".")[2].startswith("test_") or ".conftest" in name or name.endswith("conftest"))
                for name in names
            ):
                imports.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert imports == []

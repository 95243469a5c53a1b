"""Every file path the docs and the code cite exists (docs/api.md §17: the project documents itself).

docs/*.md, README.md and the code outside tests/ (Python, scripts, templates, styles, settings files)
name files of the repository (`services/review/changes.py`, `docs/api.md`,
`tests/review/test_rework_diff_bounds.py`, sometimes with a line: `models/writes.py:18`). Each such path
must exist, and a cited line must be inside the file. CHANGELOG.md is history: it keeps the words of its
day. Paths under the folders the service or the benchmarks fill at run time (instance/, uploads/,
tests/output/, bench/results/) are not files of the repository, and a web address is no path.
"""

import glob
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTENSIONS = "py|md|html|js|css|toml|cfg|conf|service|json|txt|sh|po|ya?ml|ini"
# A path starts after a space, a quote, a bracket or a backtick (not inside a word, a web address or
# another path), has at least one folder, and ends with a file name (a `*` in it is a glob); `:N` or
# `:N-M` cites lines.
PATH = re.compile(
    r"(?<![\w./:@~*-])((?:\.?[A-Za-z_][\w-]*/)(?:[\w.-]+/)*[\w*-]+\.(?:" + EXTENSIONS + r"))"
    r"(?![\w/-])(?::(\d+)(?:-(\d+))?)?"
)
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+")
RUNTIME = ("instance/", "uploads/", "tests/output/", "bench/results/")
CODE = (".py", ".js", ".html", ".css", ".toml", ".cfg", ".conf", ".service")  # with deploy/Dockerfile, .ci/run


def _scanned_files():
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    docs = [name for name in listed if re.fullmatch(r"docs/[^/]+\.md", name)]
    code = [
        name
        for name in listed
        if (name.endswith(CODE) or Path(name).name in ("Dockerfile", "run"))
        and not name.startswith("tests/")
        and "node_modules" not in name
    ]
    return [name for name in ("README.md", *docs, *code) if (ROOT / name).is_file()]


def _exists(path, lines):
    if path.startswith(RUNTIME) or "node_modules" in path:
        return True
    found = [Path(name) for name in sorted(glob.glob(str(ROOT / path)))]
    if not found:
        return False
    if lines and found[0].is_file():
        return 1 <= max(lines) <= len(found[0].read_text(errors="replace").splitlines())
    return True


def _missing_paths(name, text):
    """`name`'s citations of a repository file that does not exist (or of a line past its end)."""
    text = URL.sub(lambda found: " " * len(found[0]), text)  # keeps the line numbers
    missing = []
    for found in PATH.finditer(text):
        lines = [int(number) for number in found.groups()[1:] if number]
        if not _exists(found[1], lines):
            missing.append(f"{name}:{text.count(chr(10), 0, found.start()) + 1}: {found[0]}")
    return missing


def test_every_cited_path_exists():
    missing = [
        place for name in _scanned_files() for place in _missing_paths(name, (ROOT / name).read_text(errors="replace"))
    ]
    assert missing == []


def test_the_path_check_sees_a_stale_path():
    """The check above is only as good as its pattern: each kind of stale citation is caught, and what is
    not a repository path is left alone."""
    stale = [
        "the defaults in `services/settings.py`",
        "see docs/performance.md:9999",
        "(tests/nowhere/test_x.py)",
        "models/writes.py:1-99999",
        "tests/api/test_nothing_*.py",
    ]
    assert [text for text in stale if not _missing_paths("x.py", text)] == []
    fine = (
        "`services/settings/__init__.py`, docs/api.md §4, models/writes.py:1, tests/api/test_battery_*.py, "
        "https://example.com/gone/x.md, instance/config.py, uploads/review/x.png, bench/results/load.json, "
        "application/json, ../shared/x.md, docs/package-and-delete.md"
    )
    assert _missing_paths("x.py", fine) == []

"""The settings tables of README.md and docs/api.md are the declaration's (services/settings/declaration.py,
printed by `python -m services.settings`), and every declared setting is read by the code."""

import re
import subprocess
import sys
from pathlib import Path

from services.settings import ACCOUNT, SETTINGS, Settings, markdown_table

ROOT = Path(__file__).resolve().parents[2]


def _table(path, heading):
    """The table that follows `heading` in `path`."""
    text = (ROOT / path).read_text(encoding="utf-8")
    after = text[text.index(heading) :]
    start = after.index("\n| setting |") + 1
    end = after.find("\n\n", start)
    return after[start : end + 1]


def test_the_readme_and_the_api_docs_carry_the_declarations_table():
    for path, heading in (("README.md", "\n## Settings\n"), ("docs/api.md", "\n### Settings\n")):
        assert _table(path, heading) == markdown_table(), f"{path}: paste `python -m services.settings` in"


def test_the_table_prints_from_the_command_line():
    done = subprocess.run(
        [sys.executable, "-m", "services.settings"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout == markdown_table()
    assert "| `WECHAT_<CODE>_MASS_QUOTA` |" in done.stdout and "| `SHUTDOWN_GRACE_SECONDS` |" in done.stdout


def test_every_declared_setting_is_read():
    """An unused setting is removed, not documented: each is a Settings attribute's, or named in the code."""
    typed = {f.metadata.get("setting") for f in Settings.__dataclass_fields__.values()}
    code = "\n".join(
        path.read_text()
        for folder in ("app.py", "serving.py", "cli", "services", "blueprints")
        for path in ([ROOT / folder] if folder.endswith(".py") else (ROOT / folder).rglob("*.py"))
        if path.name != "declaration.py"
    )
    unread = [name for name in SETTINGS.fields if name not in typed and not re.search(rf"\b{name}\b", code)]
    assert unread == []
    assert set(ACCOUNT.fields) == {"APPID", "SECRET", "TOKEN", "AES_KEY", "MASS_QUOTA", "MASS_PROTECTION", "COMMENTS"}

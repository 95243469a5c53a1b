"""The admin pages' gettext catalogue (docs/api.md §14): `python translations/catalogue.py update` after
changing a page's words (new messages come in untranslated, gone ones leave), translate the new
entries of zh_Hans_CN/LC_MESSAGES/messages.po (zh-CN), then `python translations/catalogue.py compile` to write the
.mo the service reads (committed, so a fresh install needs no build step). English needs no
catalogue: its words are the message ids. tests/pages/test_i18n.py fails while any page string is missing,
untranslated or not compiled.
"""
import sys
from io import BytesIO
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "translations"
LOCALES = ("zh_Hans_CN",)  # Babel names zh-CN so (Locale.parse("zh_CN"))
# Where page words are: the views and their word tables, the templates, the scripts (words.js and friends);
# and the team's messages (services/team/words.py, messages.py), which use the same words.
METHOD_MAP = [("blueprints/**.py", "python"), ("services/team/**.py", "python"),
              ("templates/**.html", "jinja2.ext:babel_extract"), ("static/**.js", "javascript")]
OPTIONS = {"templates/**.html": {"trimmed": "true"}}
KEYWORDS = {**DEFAULT_KEYWORDS, "lazy_gettext": None, "_l": None, "lazy_pgettext": ((1, "c"), 2),
            "_p": ((1, "c"), 2), "lazy_ngettext": (1, 2)}


def extract() -> Catalog:
    """Every message of the pages, as pybabel extract finds it."""
    template = Catalog(project="content-review-service", fuzzy=False)
    for filename, lineno, message, comments, context in extract_from_dir(
            str(ROOT), METHOD_MAP, options_map=OPTIONS, keywords=KEYWORDS, strip_comment_tags=True):
        template.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return template


def po_path(locale: str) -> Path:
    return HERE / locale / "LC_MESSAGES" / "messages.po"


def read(locale: str) -> Catalog:
    with po_path(locale).open("rb") as handle:
        return read_po(handle, locale=locale)


def compiled(catalog: Catalog) -> bytes:
    out = BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def update() -> None:
    template = extract()
    for locale in LOCALES:
        path = po_path(locale)
        catalog = read(locale) if path.exists() else Catalog(locale=locale)
        catalog.update(template, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        with path.open("wb") as handle:
            write_po(handle, catalog, width=120, sort_output=False, include_previous=False)


def compile_all() -> None:
    for locale in LOCALES:
        po_path(locale).with_suffix(".mo").write_bytes(compiled(read(locale)))


if __name__ == "__main__":
    {"update": update, "compile": compile_all}[sys.argv[1] if len(sys.argv) > 1 else "update"]()

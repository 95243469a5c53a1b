"""The admin pages' two languages (docs/api.md §14): the choice (cookie, Accept-Language, setting), the
switch, the catalogue (docs/conventions.md: what babel.cfg's extraction finds is in the zh_CN .po and
translated, the header is the project's, the committed .mo is what `pybabel compile` makes of the .po),
the scripts' message keys, and the JSON API left in English."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from blueprints.script_words import WORDS
from tests.helpers.app import assert_error, login

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "translations" / "zh_Hans_CN" / "LC_MESSAGES" / "messages.po"
PLACEHOLDERS = ("PROJECT", "ORGANIZATION", "EMAIL@ADDRESS", "FULL NAME", "FIRST AUTHOR", "YEAR-MO-DA")


def documented(step):
    """The `pybabel <step> …` command of docs/conventions.md, as arguments."""
    text = (ROOT / "docs" / "conventions.md").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip().startswith(f"pybabel {step} ")]
    assert len(lines) == 1, f"docs/conventions.md names `pybabel {step}` once: {lines}"
    return shlex.split(lines[0])[1:]


def pybabel(arguments, output):
    """Run pybabel from the repository root with its `-o` output moved to `output`."""
    arguments = list(arguments)
    arguments[arguments.index("-o") + 1] = str(output)
    done = subprocess.run(
        [Path(sys.executable).with_name("pybabel"), *arguments], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def html_lang(response):
    return re.search(r'<html lang="([^"]+)">', response.get_data(as_text=True)).group(1)


def read(path, locale=None):
    with Path(path).open("rb") as handle:
        return read_po(handle, locale=locale)


def catalogue_faults(extracted, translated):
    """msgids the code uses that the catalogue lacks, and zh entries left empty or fuzzy."""
    missing, untranslated = [], []
    for message in extracted:
        if not message.id:
            continue
        found = translated.get(message.id, context=message.context)
        if found is None:
            missing.append(message.id)
        elif found.fuzzy or not (all(found.string) if isinstance(found.id, tuple) else found.string):
            untranslated.append(message.id)
    return missing, untranslated


def test_every_word_the_code_uses_is_in_the_chinese_catalogue_and_translated(tmp_path):
    """The documented `pybabel extract` (babel.cfg: views, team messages, labels, templates) against the .po."""
    pybabel(documented("extract"), tmp_path / "messages.pot")
    extracted = read(tmp_path / "messages.pot")
    assert len(extracted) > 300  # the extraction found the pages' words, and the labels in rules/
    missing, untranslated = catalogue_faults(extracted, read(PO, "zh_Hans_CN"))
    assert missing == [], "not in the catalogue: run pybabel extract and update (docs/conventions.md)"
    assert untranslated == [], "empty or fuzzy in translations/zh_Hans_CN/LC_MESSAGES/messages.po"


def test_the_check_finds_a_missing_an_empty_and_a_fuzzy_entry():
    extracted = Catalog()
    for word in ("Kept", "Gone", "Empty", "Guessed"):
        extracted.add(word)
    extracted.add(("%(num)d page", "%(num)d pages"))
    translated = Catalog(locale="zh_Hans_CN")
    translated.add("Kept", "留")
    translated.add("Empty", "")
    translated.add("Guessed", "猜", flags=["fuzzy"])
    translated.add(("%(num)d page", "%(num)d pages"), ("",))
    assert catalogue_faults(extracted, translated) == (
        ["Gone"],
        ["Empty", "Guessed", ("%(num)d page", "%(num)d pages")],
    )


def test_the_catalogue_header_is_the_projects():
    """A real header, not the template's placeholders; not fuzzy, or `pybabel compile` skips the catalogue."""
    catalogue = read(PO, "zh_Hans_CN")
    header = PO.read_text().split("\n\n", 1)[0]
    assert [word for word in PLACEHOLDERS if word in header] == []
    assert not catalogue.fuzzy
    assert catalogue.project == "content-review-service" and str(catalogue.locale) == "zh_Hans_CN"
    assert catalogue.mime_headers and dict(catalogue.mime_headers)["Plural-Forms"] == "nplurals=1; plural=0;"


def test_the_committed_mo_is_what_pybabel_compile_makes_of_the_po(tmp_path):
    """A fresh install reads the .mo as committed: it must say what the .po says."""
    assert documented("compile") == ["compile", "-d", "translations"]  # every catalogue, as below for zh_CN
    pybabel(["compile", "-i", str(PO), "-l", "zh_Hans_CN", "-o", "the .mo"], tmp_path / "messages.mo")
    assert PO.with_suffix(".mo").read_bytes() == (tmp_path / "messages.mo").read_bytes(), (
        "run pybabel compile -d translations (docs/conventions.md)"
    )


def test_every_message_key_a_script_uses_is_handed_to_the_scripts():
    used = set()
    for script in (ROOT / "static").glob("*.js"):
        used |= set(re.findall(r'\bT\(\s*"([\w.]+)"', script.read_text()))
    assert used, "the scripts use T()"
    error_keys = {key for key in used if key.startswith("error.")}
    assert sorted(used - error_keys - set(WORDS)) == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, "zh-CN"),  # REVIEW_DEFAULT_LANGUAGE's default
        ({"Accept-Language": "zh-TW,zh;q=0.9"}, "zh-CN"),
        ({"Accept-Language": "en-GB,en;q=0.9,zh-CN;q=0.8"}, "zh-CN"),  # any zh
        ({"Accept-Language": "en-GB,en;q=0.9,zh-CN;q=0"}, "en"),  # zh refused
        ({"Accept-Language": "fr, en;q=0"}, "zh-CN"),  # English refused: the setting
        ({"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"}, "en"),
        ({"Accept-Language": "de-DE"}, "zh-CN"),  # neither: the setting
    ],
)
def test_the_language_follows_accept_language_then_the_setting(make_app, headers, expected):
    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    assert html_lang(client.get("/login", headers=headers)) == expected


def test_a_browser_that_accepts_any_language_accepts_chinese(make_app):
    """`*` is every language the browser does not name (RFC 4647): zh among them, unless refused."""
    client = make_app(REVIEW_DEFAULT_LANGUAGE="en").test_client()
    assert html_lang(client.get("/login", headers={"Accept-Language": "*"})) == "zh-CN"
    assert html_lang(client.get("/login", headers={"Accept-Language": "zh;q=0, *"})) == "en"
    assert html_lang(client.get("/login", headers={"Accept-Language": "zh;q=0, fr"})) == "en"  # the setting


def test_the_cookie_wins_and_the_setting_decides_last(make_app):
    client = make_app().test_client()  # tests default to en
    assert html_lang(client.get("/login")) == "en"
    client.set_cookie("review_lang", "zh-CN")
    page = client.get("/login", headers={"Accept-Language": "en-US"})
    assert html_lang(page) == "zh-CN" and "用户名" in page.get_data(as_text=True)
    assert {"Cookie", "Accept-Language"} <= set(page.vary)
    client.set_cookie("review_lang", "klingon")  # not a language of the pages: ignored
    assert html_lang(client.get("/login", headers={"Accept-Language": "zh"})) == "zh-CN"


def test_the_switch_sets_the_cookie_for_a_year_and_goes_back(make_app):
    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    page = client.get("/login?next=/review")
    assert 'action="/language"' in page.get_data(as_text=True) and "登录" in page.get_data(as_text=True)
    answer = client.post("/language", data={"lang": "en", "next": "/login?next=/review"})
    assert answer.status_code == 303 and answer.headers["Location"] == "/login?next=/review"
    cookie = answer.headers["Set-Cookie"]
    assert "review_lang=en" in cookie and "Max-Age=31536000" in cookie and "HttpOnly" in cookie
    assert html_lang(client.get("/login")) == "en"
    elsewhere = client.post("/language", data={"lang": "zh-CN", "next": "//evil.example/"})
    assert elsewhere.headers["Location"] == "/review"  # local paths only
    refused = client.post("/language", data={"lang": "en"}, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403


def test_the_json_api_keeps_codes_and_english(make_app):
    from tests.helpers.app import create_admin

    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    create_admin()
    login(client)
    client.set_cookie("review_lang", "zh-CN")
    error = assert_error(client.get("/api/review/tasks/nope", headers={"Accept-Language": "zh-CN"}), 404, "not_found")
    assert re.fullmatch(r"[ -~]+", error["message"]), error  # English, not translated


def test_error_pages_speak_the_page_language(make_app):
    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    from tests.helpers.app import create_admin

    create_admin()
    login(client)
    page = client.get("/review/no-such-task").get_data(as_text=True)
    assert '<html lang="zh-CN">' in page and "要找的内容不存在或已删除。" in page and "返回审核列表" in page


def test_the_api_docs_page_is_named_in_the_pages_language(admin_client):
    """Its title and headings are the page's words (接口文档 on a Chinese page); the document itself is the
    API's, in English (docs/api.md §14)."""
    admin_client.set_cookie("review_lang", "zh-CN")
    html = admin_client.get("/api/docs").get_data(as_text=True)
    assert "<h1>接口文档</h1>" in html and "<title>接口文档 · " in html, html[:600]
    assert "<h2>Webhooks</h2>" not in html
    admin_client.set_cookie("review_lang", "en")
    assert "<h1>API</h1>" in admin_client.get("/api/docs").get_data(as_text=True)

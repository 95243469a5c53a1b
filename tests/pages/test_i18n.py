"""The admin pages' two languages (docs/api.md §14): the choice (cookie, Accept-Language, setting), the
switch, the catalogue (every page string translated, the committed .mo compiled from the .po), the
scripts' message keys, and the JSON API left in English."""
import importlib.util
import re
from pathlib import Path

import pytest

from blueprints.script_words import WORDS
from tests.conftest import assert_error, login

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("catalogue", ROOT / "translations" / "catalogue.py")
catalogue = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalogue)


def html_lang(response):
    return re.search(r'<html lang="([^"]+)">', response.get_data(as_text=True)).group(1)


def test_every_page_string_is_in_the_chinese_catalogue_and_translated():
    """pybabel's extraction over the templates, the views and the scripts against zh_CN's .po."""
    extracted = catalogue.extract()
    translations = catalogue.read("zh_Hans_CN")
    missing, untranslated = [], []
    for message in extracted:
        if not message.id:
            continue
        found = translations.get(message.id, context=message.context)
        if found is None:
            missing.append(message.id)
        elif not (all(found.string) if isinstance(found.id, tuple) else found.string) or found.fuzzy:
            untranslated.append(message.id)
    assert len(extracted) > 100  # the extraction found the pages' words
    assert missing == [], "not in the catalogue: run python translations/catalogue.py update"
    assert untranslated == [], "untranslated in translations/zh_Hans_CN/LC_MESSAGES/messages.po"


def test_the_committed_mo_is_the_compiled_po():
    """A fresh install reads the .mo as committed: it must say what the .po says."""
    for locale in catalogue.LOCALES:
        committed = catalogue.po_path(locale).with_suffix(".mo").read_bytes()
        assert committed == catalogue.compiled(catalogue.read(locale)), \
            f"{locale}: run python translations/catalogue.py compile"


def test_every_message_key_a_script_uses_is_handed_to_the_scripts():
    used = set()
    for script in (ROOT / "static").glob("*.js"):
        used |= set(re.findall(r'\bT\(\s*"([\w.]+)"', script.read_text()))
    assert used, "the scripts use T()"
    error_keys = {key for key in used if key.startswith("error.")}
    assert sorted(used - error_keys - set(WORDS)) == []


@pytest.mark.parametrize(("headers", "expected"), [
    ({}, "zh-CN"),  # REVIEW_DEFAULT_LANGUAGE's default
    ({"Accept-Language": "zh-TW,zh;q=0.9"}, "zh-CN"),
    ({"Accept-Language": "en-GB,en;q=0.9,zh-CN;q=0.8"}, "zh-CN"),  # any zh
    ({"Accept-Language": "en-GB,en;q=0.9,zh-CN;q=0"}, "en"),  # zh refused
    ({"Accept-Language": "fr, en;q=0"}, "zh-CN"),  # English refused: the setting
    ({"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"}, "en"),
    ({"Accept-Language": "de-DE"}, "zh-CN"),  # neither: the setting
])
def test_the_language_follows_accept_language_then_the_setting(make_app, headers, expected):
    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    assert html_lang(client.get("/login", headers=headers)) == expected


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
    from tests.conftest import create_admin

    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    create_admin()
    login(client)
    client.set_cookie("review_lang", "zh-CN")
    error = assert_error(client.get("/api/review/tasks/nope", headers={"Accept-Language": "zh-CN"}), 404, "not_found")
    assert re.fullmatch(r"[ -~]+", error["message"]), error  # English, not translated


def test_error_pages_speak_the_page_language(make_app):
    client = make_app(REVIEW_DEFAULT_LANGUAGE="zh-CN").test_client()
    from tests.conftest import create_admin

    create_admin()
    login(client)
    page = client.get("/review/no-such-task").get_data(as_text=True)
    assert '<html lang="zh-CN">' in page and "要找的内容不存在或已删除。" in page and "返回审核列表" in page


@pytest.mark.parametrize(("name", "value", "words"), [
    ("REVIEW_DEFAULT_LANGUAGE", "fr", "REVIEW_DEFAULT_LANGUAGE must be zh-CN or en, not 'fr'"),
    ("REVIEW_TIME_ZONE", "Mars/Olympus", "REVIEW_TIME_ZONE must be a time zone name like Asia/Shanghai"),
])
def test_a_bad_language_or_time_zone_stops_the_start(make_app, name, value, words):
    from services.settings import SettingsError

    with pytest.raises(SettingsError, match=re.escape(words)):
        make_app(**{name: value})

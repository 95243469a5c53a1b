"""The article's own words are in the article's language, Chinese, whatever language the reviewer's page is
in (docs/api.md §5): the heading of the numbered references is the catalogue's zh entry for "References"."""

from pathlib import Path

from babel.messages.pofile import read_po

from tests.helpers.app import create_admin, login

PO = Path(__file__).resolve().parents[2] / "translations" / "zh_Hans_CN" / "LC_MESSAGES" / "messages.po"
LINKED = "见[文档](https://developers.weixin.qq.com/doc/)。"


def heading():
    with PO.open("rb") as handle:
        entry = read_po(handle, locale="zh_Hans_CN").get("References")
    assert entry is not None and entry.string, "the catalogue's zh entry for References"
    return entry.string


def test_an_english_page_previews_the_article_with_its_chinese_references_heading(app, client):
    create_admin()
    login(client)
    client.set_cookie("review_lang", "en")
    html = client.post("/api/review/preview", json={"markdown": LINKED}).get_json()["html"]
    assert heading() == "参考资料" and f">{heading()}</h3>" in html and "References" not in html

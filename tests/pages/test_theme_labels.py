"""The theme choice on a task's page names each theme in the page's language (docs/api.md §5, §14): the
names are catalogue words, with the English msgid as the English name."""

import re

import pytest

from tests.helpers.app import create_admin, login
from tests.helpers.review import article_payload, create_task

NAMES = {"en": ["Default", "Tech blue", "Warm paper"], "zh-CN": ["默认", "科技蓝", "暖色纸张"]}


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_the_theme_choice_is_in_the_pages_language(app, client, agent_headers, language):
    task = create_task(client, agent_headers, article_payload())
    create_admin()
    login(client)
    client.set_cookie("review_lang", language)
    page = client.get(f"/review/{task['id']}").get_data(as_text=True)
    choice = re.search(r'<select id="theme-template">(.*?)</select>', page, re.S)[1]
    options = re.findall(r'<option value="([^"]+)"[^>]*>([^<]*)</option>', choice)
    assert options == list(zip(["default", "tech-blue", "warm-paper"], NAMES[language], strict=True))

"""What a body from the agent may cost to render (docs/api.md §14): the parser looks at each "[" about
once, a table has at most MAX_TABLE_COLUMNS columns, a page renders each body once (remembered by
content), and the live preview is rate-limited per admin."""

import random
import time

import pytest

from rules.limits import BODY_PREVIEWS_PER_ADMIN, MAX_TABLE_COLUMNS
from services import rendering
from services.rendering import renderer
from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.review import article_payload, body_option, create_task

PATHOLOGICAL = "[" * 199_990  # issue 35: five of them made every view of the task page take 24 s

_PARAGRAPH = (
    "## Section {n}\n\nReviewing an article before it goes out is **the** step that matters most. We "
    "split drafting, review and publishing into separate steps, each leaving a record: see [the guide]"
    "(https://example.com/guide/{n}) and *earlier posts*.\n\n- the title fits\n- the summary agrees with "
    "the body\n  - numbers, dates, sources\n\n> Say what is wrong and how to fix it, not only "
    '"rejected".\n\n| step | owner |\n|---|---|\n| draft | agent |\n| review | editor |\n\n'
)


def ordinary_article(size, n=0):
    parts, section = [], n
    while sum(map(len, parts)) < size:
        parts.append(_PARAGRAPH.replace("{n}", str(section)))
        section += 1
    return "".join(parts)[:size]


def task_with_bodies(client, agent_headers, bodies):
    candidates = {
        **article_payload()["candidates"],
        "bodyOptions": [body_option(f"opt-{i}", body) for i, body in enumerate(bodies)],
    }
    return create_task(client, agent_headers, article_payload(candidates=candidates))


def view_seconds(admin_client, task):
    start = time.perf_counter()
    response = admin_client.get(f"/review/{task['id']}")
    assert response.status_code == 200
    return time.perf_counter() - start


# ---- the parser ------------------------------------------------------------------------------------


def test_the_bounded_parser_makes_markdown_its_own_tokens():
    """Remembering what a label walk learnt changes nothing: random bracket-heavy text renders as plain
    markdown-it renders it."""
    plain = renderer._build_parser(bounded=False)
    rnd = random.Random(5)
    alphabet = "[]()!*_`<>\\ ax\n:/\"'"
    samples = [
        "[[a]",
        "[a]]",
        "[[a](b)](c)",
        "[a [b](c) d](e)",
        "![[a](b)](c)",
        "[`]`](x)",
        "[<a]>](b)",
        "[a\\]](b)",
        "[[[[[[[[[[[[[[[[[[[[[[foo]()",
        "[x]: /u\n\n[x]",
        "*[a*](b)",
    ]
    samples += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 60))) for _ in range(6000)]
    for text in samples:
        assert renderer.PARSER.render(text) == plain.render(text), text


def test_each_bracket_is_looked_at_about_once(monkeypatch):
    """markdown-it walks again from every "[" (~20 nested walks each: 2 s for 199,990); bounded, the
    tokens skipped while looking for labels grow with the text, a few per "["."""
    inline = renderer.PARSER.inline
    real, calls = inline.skipToken, []

    def counted(state):
        calls.append(state.pos)
        real(state)

    monkeypatch.setattr(inline, "skipToken", counted)
    for text in ("[" * 20_000, "[" * 19_999 + "]", "*[" * 10_000, "![" * 10_000, "[x" * 10_000):
        calls.clear()
        renderer.PARSER.parse(text)
        assert len(calls) < 3 * text.count("["), (text[:4], len(calls))


def test_a_table_wider_than_the_limit_is_text():
    def table(columns):
        return "|" + "a|" * columns + "\n|" + "-|" * columns + "\n|" + "b|" * columns + "\n"

    assert any(t.type == "table_open" for t in renderer.PARSER.parse(table(MAX_TABLE_COLUMNS)))
    wide = renderer.PARSER.parse(table(5000))
    assert not any(t.type == "table_open" for t in wide)
    assert "|a|a|" in rendering.render_article(table(5000))  # shown as the text it is


# ---- remembered by content -------------------------------------------------------------------------


def test_a_body_is_parsed_once_for_its_images_and_its_preview(monkeypatch):
    parses = []
    real = renderer.PARSER.parse
    monkeypatch.setattr(renderer.PARSER, "parse", lambda text, env=None: parses.append(1) or real(text, env))
    body = f"# once {time.time_ns()}\n\n![a](https://example.com/a.png) [x](https://example.com)\n"
    asked = []

    def placeholders(urls):
        asked.append(urls)
        return {url: "/static/not-an-asset.svg" for url in urls}

    first = rendering.render_preview(body, "default", None, placeholders)
    assert rendering.image_urls(body) == ["https://example.com/a.png"]
    again = rendering.render_preview(body, "default", None, placeholders)
    assert len(parses) == 1 and again == first and 'src="/static/not-an-asset.svg"' in first
    assert asked == [["https://example.com/a.png"]] * 2  # the image map is asked each time: it is in the key
    other_theme = rendering.render_preview(
        body, next(t for t in rendering.THEMES if t != "default"), None, placeholders
    )
    assert other_theme != first and len(parses) == 2  # another theme: parsed and rendered again


def test_remembered_previews_stay_within_their_size():
    remembered = rendering._Remembered(100, len)
    for n in range(50):
        remembered.put(str(n), "x" * 30)
    assert remembered.total <= 100 and list(remembered.entries) == ["47", "48", "49"]
    remembered.put("huge", "x" * 101)  # bigger than the whole: not kept
    assert remembered.get("huge") is None and remembered.get("49") == "x" * 30


# ---- the task page ---------------------------------------------------------------------------------


def test_a_page_of_pathological_bodies_costs_what_an_ordinary_one_does_after_the_first_view(
    client, admin_client, agent_headers
):
    """Bodies of 199,990 "[" against ordinary articles of the same length. Before, every view rendered
    every body again (five: 24 s a view, 12 times the ordinary page's); now a view renders only what it
    has not rendered before."""
    bad = task_with_bodies(client, agent_headers, [PATHOLOGICAL[: len(PATHOLOGICAL) - n] for n in range(3)])
    good = task_with_bodies(client, agent_headers, [ordinary_article(199_990 - n, n) for n in range(3)])
    for task in (bad, good):
        view_seconds(admin_client, task)  # the first view renders
    again_bad = min(view_seconds(admin_client, bad) for _ in range(2))
    again_good = min(view_seconds(admin_client, good) for _ in range(2))
    # A ratio of milliseconds is noise on a loaded machine: rendering again took seconds (the floor is far below).
    assert again_bad < max(4 * again_good, 0.5), (again_bad, again_good)
    page = admin_client.get(f"/review/{bad['id']}").get_data(as_text=True)
    assert PATHOLOGICAL[:1000] in page  # the brackets are there, as text


# ---- the live preview ------------------------------------------------------------------------------


@pytest.mark.both_stores
def test_the_preview_is_rate_limited_per_admin(app, admin_client):
    body = {"markdown": "# 标题\n\n正文", "themeTemplate": "default"}
    for _ in range(BODY_PREVIEWS_PER_ADMIN):
        assert admin_client.post("/api/review/preview", json=body).status_code == 200
    refused = admin_client.post("/api/review/preview", json=body)
    assert_error(refused, 429, "rate_limited")
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert str(BODY_PREVIEWS_PER_ADMIN) in refused.get_json()["error"]["message"]
    create_admin("second")
    other = app.test_client()
    login(other, "second")
    assert other.post("/api/review/preview", json=body).status_code == 200  # counted per admin


# ---- the task page: long bodies on request -----------------------------------------------------------


def test_a_long_body_is_rendered_when_asked_not_with_the_page(admin_client, agent_headers):
    """Bodies over RENDER_INLINE_CHARS (docs/api.md §14) are left to the preview route: the page's first
    view parses none of them, so five pathological bodies cost about what five short ones do."""
    from rules.limits import RENDER_INLINE_CHARS

    short = task_with_bodies(admin_client, agent_headers, ["# 短文\n\n正文。"] * 5)
    long = task_with_bodies(
        admin_client, agent_headers, [PATHOLOGICAL[: RENDER_INLINE_CHARS + 1 + i] for i in range(5)]
    )
    page = admin_client.get(f"/review/{long['id']}").get_data(as_text=True)
    assert page.count("data-render-option=") == 5 and 'data-deferred="true"' in page
    assert "<p>[[[[[[[[" not in page  # no draft rendered into the page itself (the editor holds the text)
    assert "data-render-option=" not in admin_client.get(f"/review/{short['id']}").get_data(as_text=True)
    view_seconds(admin_client, short), view_seconds(admin_client, long)  # both warm
    # Time on the first view of a fresh pathological task against an ordinary one (wide margin).
    fresh = task_with_bodies(admin_client, agent_headers, [PATHOLOGICAL[: 150_000 + i] for i in range(5)])
    other = task_with_bodies(admin_client, agent_headers, [ordinary_article(3_000, i) for i in range(5)])
    assert view_seconds(admin_client, fresh) < 10 * max(view_seconds(admin_client, other), 0.05)
    # What the page leaves out, the route renders on request (as the page's button asks).
    answer = admin_client.post(
        "/api/review/preview",
        json={"markdown": PATHOLOGICAL[: RENDER_INLINE_CHARS + 1], "themeTemplate": "default", "publicAccount": None},
    )
    assert answer.status_code == 200 and answer.get_json()["html"]

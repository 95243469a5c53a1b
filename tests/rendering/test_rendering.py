"""Markdown -> WeChat-safe HTML (docs/api.md §5, Article bodyHtml and Themes)."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from services.rendering import (
    MAX_HTML_BYTES,
    MAX_HTML_CHARS,
    THEMES,
    ContentTooLarge,
    check_size,
    image_urls,
    render_article,
    theme_config,
)
from services.rendering.renderer import PARSER, ArticleWriter
from services.rendering.sanitize import sanitize
from services.rendering.themes import merged_variables, resolve_styles

ARTICLE = """# 公众号发布指南

欢迎阅读本文。详见[微信开放文档](https://developers.weixin.qq.com/doc/)，
也可以看[往期文章](https://mp.weixin.qq.com/s/AbC123)，再读一次[开放文档](https://developers.weixin.qq.com/doc/)
和[规则说明](https://example.com/rules?a=1&b=2)。

## 步骤

1. 准备素材
   - 封面图片
   - 正文配图
     - 尺寸不超过 1 MB
2. 编写 **正文**，注意 ~~错别字~~ `标点`

| 名称 | 数量 | 备注 |
|:--|--:|:-:|
| 苹果 | 3 | 新鲜 |
| 香蕉 | 12 | 进口 |

```python
def greet(name):
    if name:
        return f"你好, {name} <3"
    return None
```

> 引用：内容为王。

![封面图](https://cdn.example.com/cover.png)

![第二张 图](<images/第二张 图.png>)

---
"""


class _Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children = tag, dict(attrs), parent, []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag=None):
        for child in self.children:
            if isinstance(child, _Node):
                if tag is None or child.tag == tag:
                    yield child
                yield from child.iter(tag)


class _TreeBuilder(HTMLParser):
    VOID = {"br", "hr", "img"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = _Node("#root", [], None)

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, attrs, self.current)
        self.current.children.append(node)
        if tag not in self.VOID:
            self.current = node

    def handle_endtag(self, tag):
        assert self.current.tag == tag, f"</{tag}> closes <{self.current.tag}>"
        self.current = self.current.parent

    def handle_data(self, data):
        self.current.children.append(data)


def tree(html):
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    assert builder.current is builder.root, "unclosed elements"
    return builder.root


def style_of(node):
    return dict(
        (name.strip(), value.strip())
        for name, _, value in (d.partition(":") for d in node.attrs.get("style", "").split(";") if d)
    )


# --- themes -----------------------------------------------------------------------------------


def test_themes_have_default_and_two_more_with_the_required_variables():
    assert "default" in THEMES and len(THEMES) >= 3
    for name in THEMES:
        variables = theme_config(name)["cssVariables"]
        for key in ("--primary-color", "--font-size", "--line-height"):
            assert variables[key], (name, key)
        assert variables["--font-family"] == "", name  # WeChat's own font stack (docs/api.md §5)
    assert (
        theme_config("tech-blue")["cssVariables"]["--primary-color"]
        != (theme_config("default")["cssVariables"]["--primary-color"])
    )


def test_theme_config_overlays_account_overrides_on_template_defaults():
    defaults = theme_config("warm-paper")["cssVariables"]
    config = theme_config("warm-paper", {"--primary-color": "#c0392b", "--line-height": 2})
    assert config["cssVariables"]["--primary-color"] == "#c0392b"
    assert config["cssVariables"]["--line-height"] == "2"
    assert config["cssVariables"]["--font-family"] == defaults["--font-family"]
    # the stored {"cssVariables": …} shape is accepted as overrides too
    nested = theme_config("warm-paper", {"cssVariables": {"--font-size": "17px"}})
    assert nested["cssVariables"]["--font-size"] == "17px"
    assert theme_config(None) == theme_config("default")


def test_theme_config_rejects_unknown_template_variable_and_unsafe_values():
    with pytest.raises(ValueError, match="unknown theme template 'neon'"):
        theme_config("neon")
    with pytest.raises(ValueError, match="--primary-colour"):
        theme_config("default", {"--primary-colour": "red"})
    for bad in ("red;position:fixed", "url(javascript:alert(1))", "red}</style><script>", " ", None, ["red"]):
        with pytest.raises(ValueError, match="--primary-color"):
            theme_config("default", {"--primary-color": bad})


# --- image_urls -------------------------------------------------------------------------------


def test_image_urls_lists_each_image_src_once_in_order_as_written():
    markdown = (
        "正文 ![甲](https://a.example/1.png) 与 [链接](https://a.example/page)\n\n"
        "[![乙](https://a.example/2.png)](https://mp.weixin.qq.com/s/x)\n\n"
        "![丙][pic] ![甲again](https://a.example/1.png) ![丁](<本地 图片.png>)\n\n"
        "[pic]: https://a.example/3.png\n"
    )
    assert image_urls(markdown) == [
        "https://a.example/1.png",
        "https://a.example/2.png",
        "https://a.example/3.png",
        "本地 图片.png",
    ]
    assert image_urls("没有图片，只有[链接](https://a.example/)。") == []


# --- render_article rules ---------------------------------------------------------------------


def test_raw_html_in_markdown_is_escaped_and_shown_as_text():
    html = render_article('注意 <script>alert("x")</script> 和 <b onclick="steal()">粗体</b>\n\n<div>块</div>\n')
    assert "<script" not in html and "<b" not in html and "<div" not in html
    assert "onclick" not in tree(html).iter().__next__().attrs
    text = tree(html).text()
    assert '<script>alert("x")</script>' in text
    assert '<b onclick="steal()">粗体</b>' in text
    assert "<div>块</div>" in text


def test_output_is_one_section_with_base_styles_and_no_style_element_class_or_id():
    html = render_article(ARTICLE, "default")
    root = tree(html)
    top = [c for c in root.children if isinstance(c, _Node)]
    assert [n.tag for n in top] == ["section"] and html.startswith("<section")
    base = style_of(top[0])
    variables = theme_config("default")["cssVariables"]
    assert base["font-size"] == variables["--font-size"]
    assert base["line-height"] == variables["--line-height"]
    assert "font-family" not in base  # WeChat's article structure rules: the platform's own font stack
    assert base["color"] == variables["--text-color"]
    assert "<style" not in html
    for node in root.iter():
        assert "class" not in node.attrs and "id" not in node.attrs, node.tag
    assert all(n.attrs.get("style") for n in root.iter("p"))


def test_css_variables_are_substituted_from_the_theme_config():
    config = theme_config("default", {"--primary-color": "#123456", "--font-size": "18px"})
    html = render_article(ARTICLE, "default", config)
    assert "var(" not in html and "--primary-color" not in html
    root = tree(html)
    assert style_of(next(root.iter("section")))["font-size"] == "18px"
    assert style_of(next(root.iter("h2")))["border-bottom"] == "2px solid #123456"
    assert style_of(next(root.iter("blockquote")))["border-left"] == "4px solid #123456"
    # a partial config still gets the template's other defaults
    partial = render_article(ARTICLE, "tech-blue", {"cssVariables": {"--font-size": "14px"}})
    assert "font-size:14px" in partial and THEMES["tech-blue"]["cssVariables"]["--primary-color"] in partial


def test_themes_change_the_inline_styles():
    outputs = {name: render_article(ARTICLE, name) for name in THEMES}
    assert len(set(outputs.values())) == len(THEMES)
    for name, html in outputs.items():
        assert THEMES[name]["cssVariables"]["--primary-color"] in html


def test_external_links_become_numbered_references_listed_at_the_end():
    html = render_article(ARTICLE)
    root = tree(html)
    hrefs = [a.attrs["href"] for a in root.iter("a")]
    assert hrefs == ["https://mp.weixin.qq.com/s/AbC123"]
    assert [s.text() for s in root.iter("sup")] == ["[1]", "[1]", "[2]"]
    assert "微信开放文档" in root.text() and "规则说明" in root.text()
    heading = [h for h in root.iter("h3") if h.text() == "参考资料"]
    assert len(heading) == 1
    section = next(root.iter("section"))
    items = section.children[section.children.index(heading[0]) + 1 :]
    assert [p.text() for p in items] == [
        "[1] 微信开放文档: https://developers.weixin.qq.com/doc/",
        "[2] 规则说明: https://example.com/rules?a=1&b=2",
    ]


def test_lookalike_hosts_are_references_and_articles_without_links_have_no_reference_list():
    html = render_article("[钓鱼](https://mp.weixin.qq.com.evil.example/s/1) 与 [正文](http://mp.weixin.qq.com/s/2)")
    root = tree(html)
    assert [a.attrs["href"] for a in root.iter("a")] == ["http://mp.weixin.qq.com/s/2"]
    assert "[1] 钓鱼: https://mp.weixin.qq.com.evil.example/s/1" in root.text()
    assert "参考资料" not in render_article("只有文字，没有链接。")


def test_code_blocks_are_highlighted_inline_with_br_line_breaks_and_scroll():
    html = render_article(ARTICLE)
    pre = next(tree(html).iter("pre"))
    assert style_of(pre)["overflow-x"] == "auto"
    code = next(pre.iter("code"))
    colours = {style_of(span).get("color") for span in code.iter("span")} - {None}
    assert len(colours) >= 3  # keywords, names, strings, … in different colours
    inner = html[html.index("<code", html.index("<pre")) : html.index("</pre>")]
    assert inner.count("<br>") == 3 and "\n" not in inner
    lines = inner.split("<br>")
    assert lines[1].startswith("&nbsp;&nbsp;&nbsp;&nbsp;") and "if" in lines[1]
    assert lines[2].startswith("&nbsp;" * 8)
    assert "&lt;3" in inner  # code text is escaped, not markup
    assert code.text().replace("\xa0", " ").startswith("def greet(name):    if name:")


def test_code_blocks_without_known_language_are_plain_escaped_text():
    html = render_article("```unknown-lang\n<a>  x\n  y\n```\n\n    缩进代码\n    第二行\n")
    pres = list(tree(html).iter("pre"))
    assert len(pres) == 2
    first = html[html.index("<pre") : html.index("</pre>")]
    assert "&lt;a&gt; &nbsp;x<br>&nbsp;&nbsp;y" in first and "<span" not in first
    assert pres[1].text() == "缩进代码第二行"


def test_tables_are_wrapped_in_a_horizontally_scrolling_section():
    root = tree(render_article(ARTICLE))
    table = next(root.iter("table"))
    assert table.parent.tag == "section" and style_of(table.parent)["overflow-x"] == "auto"
    cells = [[c.text() for c in tr.children] for tr in table.iter("tr")]
    assert cells == [["名称", "数量", "备注"], ["苹果", "3", "新鲜"], ["香蕉", "12", "进口"]]
    aligns = [style_of(c)["text-align"] for c in next(table.iter("tr")).children]
    assert aligns == ["left", "right", "center"]
    assert all("border" in style_of(td) for td in table.iter("td"))


def test_nested_lists_stay_inside_their_parent_item_with_text_in_a_section():
    root = tree(render_article(ARTICLE))
    outer = next(root.iter("ol"))
    assert style_of(outer)["list-style-type"] == "decimal"
    items = outer.children
    assert [li.tag for li in items] == ["li", "li"]
    first_text, nested = items[0].children
    assert (first_text.tag, first_text.text()) == ("section", "准备素材")
    assert nested.tag == "ul" and nested.parent is items[0]
    assert style_of(nested)["list-style-type"]
    deepest = list(nested.iter("ul"))
    assert len(deepest) == 1 and deepest[0].parent.parent is nested
    assert deepest[0].text() == "尺寸不超过 1 MB"
    for li in root.iter("li"):
        assert li.children[0].tag == "section", li.text()
        assert not any(isinstance(c, str) and c.strip() for c in li.children)
    assert items[1].children[0].text() == "编写 正文，注意 错别字 标点"
    assert "start" not in outer.attrs
    assert next(tree(render_article("3. 第三\n4. 第四\n")).iter("ol")).attrs["start"] == "3"


def test_images_use_the_uploaded_urls_and_are_styled():
    image_map = {"https://cdn.example.com/cover.png": "http://mmbiz.qpic.cn/mmbiz_png/cover/0"}
    images = list(tree(render_article(ARTICLE, image_map=image_map)).iter("img"))
    assert [i.attrs["src"] for i in images] == [
        "http://mmbiz.qpic.cn/mmbiz_png/cover/0",
        "images/%E7%AC%AC%E4%BA%8C%E5%BC%A0%20%E5%9B%BE.png",  # not uploaded: keeps its src
    ]
    assert [i.attrs["alt"] for i in images] == ["封面图", "第二张 图"]
    for img in images:
        style = style_of(img)
        assert style["max-width"] == "100%" and style["display"] == "block" and style["margin"]
    # keys are the src as written in the Markdown, exactly what image_urls returns
    written = image_urls(ARTICLE)[1]
    mapped = render_article(ARTICLE, image_map={written: "http://mmbiz.qpic.cn/second"})
    assert [i.attrs["src"] for i in tree(mapped).iter("img")][1] == "http://mmbiz.qpic.cn/second"


def test_sanitizing_last_keeps_every_style_and_drops_unsafe_urls():
    styles = resolve_styles("tech-blue", merged_variables("tech-blue", None))
    unsanitized = ArticleWriter(styles, THEMES["tech-blue"]["codeStyle"], {}).render(PARSER.parse(ARTICLE))
    sanitized = render_article(ARTICLE, "tech-blue")
    found = re.findall(r'style="([^"]*)"', sanitized)
    assert len(found) > 40 and found == re.findall(r'style="([^"]*)"', unsanitized)
    hostile = render_article(
        "![x](data:image/png;base64,iVBORw0KGgo=) [点我](javascript:alert(1)) "
        "[文件](file:///etc/passwd)\n\n<img src=x onerror=alert(1)>"
    )
    assert "data:" not in re.sub(r">[^<]*<", "><", hostile)  # not in any attribute
    assert "<a" not in hostile and "onerror=" not in re.sub(r">[^<]*<", "><", hostile)
    assert sanitize('<section style="color:red"><iframe src="https://x"></iframe><u>u</u></section>') == (
        '<section style="color:red">u</section>'
    )


def test_strikethrough_emphasis_and_chinese_text_survive():
    root = tree(render_article("**加粗** *斜体* ~~删除线~~ `行内代码`\n硬换行  \n第二行"))
    assert next(root.iter("strong")).text() == "加粗"
    assert next(root.iter("em")).text() == "斜体"
    assert next(root.iter("del")).text() == "删除线"
    assert next(root.iter("code")).text() == "行内代码"
    assert len(list(root.iter("br"))) == 1


def test_render_article_rejects_unknown_theme_and_does_not_check_size():
    with pytest.raises(ValueError, match="default, tech-blue, warm-paper"):
        render_article(ARTICLE, "neon")
    long_html = render_article("很长的段落。" * 4000)
    assert len(long_html) > MAX_HTML_CHARS
    with pytest.raises(ContentTooLarge):
        check_size(long_html)


# --- check_size -------------------------------------------------------------------------------


def test_check_size_allows_the_limits_and_names_the_size_when_over():
    check_size("字" * MAX_HTML_CHARS)
    with pytest.raises(ContentTooLarge, match="is 20,001 characters"):
        check_size("字" * (MAX_HTML_CHARS + 1))
    with pytest.raises(ContentTooLarge) as error:
        check_size("<p>" + "字" * 23_409 + "</p>")
    message = str(error.value)
    assert message.startswith("rendered article is 23,416 characters; the platform allows at most 20,000")
    assert "\n" not in message and isinstance(error.value, ValueError)
    with pytest.raises(ContentTooLarge, match=r"is 1,048,577 bytes; the platform allows at most 1,048,576"):
        check_size("a" * (MAX_HTML_BYTES + 1))


def test_rendering_package_does_not_import_flask():
    package = Path(__file__).resolve().parents[2] / "services" / "rendering"
    for module in package.glob("*.py"):
        assert not re.search(r"^\s*(from|import)\s+flask", module.read_text(), re.M), module.name


@pytest.mark.parametrize("theme", list(THEMES))
def test_no_theme_sets_a_font_family_on_body_text_only_code_is_monospace(theme):
    """WeChat's article structure rules advise against a font-family on body text (docs/api.md §5): the
    default themes set none; code keeps a monospace family; an account or task may still name one."""
    html = render_article(
        "# 标题\n\n正文 `code` **粗** [链](https://a.example)\n\n> 引用\n\n| a |\n|---|\n| 1 |\n\n"
        "```python\nprint(1)\n```\n",
        theme,
    )
    for node in tree(html).iter():
        family = style_of(node).get("font-family")
        if family is not None:
            assert node.tag == "code" and family.endswith("monospace"), (node.tag, family)
    assert sum(1 for node in tree(html).iter("code") if "font-family" in style_of(node)) == 2
    named = render_article("正文", theme, theme_config(theme, {"--font-family": "Georgia,serif"}))
    assert style_of(next(tree(named).iter("section")))["font-family"] == "Georgia,serif"
    # The stored config (with the family left unset) is taken back as it is, as a snapshot re-renders it.
    assert render_article("正文", theme, theme_config(theme, theme_config(theme)["cssVariables"])) == render_article(
        "正文", theme
    )

"""Theme templates: CSS variables plus a role -> inline-style map (docs/api.md §5, Themes).

Every theme shares one set of variable names (a stored themeConfig stays valid with any template); WeChat
ignores CSS variables, so resolve_styles() substitutes them. Styles are short: the platform counts the
characters of the whole body, so what the wrapper <section> gives by inheritance is not repeated.
"""

import re
from functools import lru_cache
from typing import Any

from rules.vocabulary import THEME_NAMES

_BASE_VARIABLES = {
    "--primary-color": "#07c160",
    "--font-size": "16px",
    "--line-height": "1.75",
    # None for body text: WeChat's own font stack applies, as its article structure rules advise (an
    # account's overrides or a task's themeConfig may still name one). Code keeps its monospace family.
    "--font-family": "",
    "--text-color": "#333",
    "--heading-color": "#222",
    "--muted-color": "#666",
    "--border-color": "#e5e5e5",
    "--background-color": "transparent",
    "--quote-background": "#f7f7f7",
    "--table-header-background": "#f5f5f5",
    "--inline-code-background": "#f2f2f2",
    "--code-background": "#f0f0f0",
    "--code-color": "#333",
    "--code-font-family": "Menlo,Consolas,monospace",
}

_HEADING = "font-weight:bold;line-height:1.4;color:var(--heading-color);margin:1.4em 0 0.8em"

# Roles are element kinds in the renderer; an empty string means "no style attribute".
_BASE_STYLES = {
    "wrapper": (
        "font-family:var(--font-family);font-size:var(--font-size);line-height:var(--line-height);"
        "color:var(--text-color);background-color:var(--background-color);"
        "letter-spacing:0.5px;word-break:break-word"
    ),
    "p": "margin:1em 0",
    "quote_p": "margin:0.5em 0",
    "h1": "font-size:1.6em;text-align:center;" + _HEADING,
    "h2": "font-size:1.35em;padding-bottom:0.3em;border-bottom:2px solid var(--primary-color);" + _HEADING,
    "h3": "font-size:1.2em;" + _HEADING,
    "h4": "font-size:1.1em;" + _HEADING,
    "h5": "font-size:1em;" + _HEADING,
    "h6": "font-size:1em;color:var(--muted-color);" + _HEADING,
    "blockquote": (
        "margin:1em 0;padding:0.5em 1em;border-left:4px solid var(--primary-color);"
        "background-color:var(--quote-background);color:var(--muted-color)"
    ),
    "ul": "margin:0.8em 0;padding-left:1.6em;list-style-type:disc",
    "ul_nested": "margin:0.2em 0;padding-left:1.4em;list-style-type:circle",
    "ol": "margin:0.8em 0;padding-left:1.6em;list-style-type:decimal",
    "ol_nested": "margin:0.2em 0;padding-left:1.4em;list-style-type:lower-alpha",
    "li": "",
    "li_section": "",
    "a": "color:var(--primary-color);text-decoration:none;border-bottom:1px solid var(--primary-color)",
    "link_text": "color:var(--primary-color)",
    "sup": "color:var(--primary-color)",
    "strong": "",
    "em": "",
    "del": "",
    "code": (
        "padding:2px 4px;border-radius:3px;background-color:var(--inline-code-background);"
        "color:var(--primary-color);font-size:90%;font-family:var(--code-font-family)"
    ),
    "pre": (
        "margin:1em 0;padding:1em;border-radius:6px;overflow-x:auto;white-space:pre;"
        "background-color:var(--code-background);color:var(--code-color);"
        "font-size:0.85em;line-height:1.6;letter-spacing:0"
    ),
    "code_block": "font-family:var(--code-font-family);white-space:pre",
    "table_wrap": "overflow-x:auto;margin:1em 0",
    "table": "border-collapse:collapse;min-width:100%;font-size:0.9em",
    "th": "border:1px solid var(--border-color);padding:6px 10px;background-color:var(--table-header-background)",
    "td": "border:1px solid var(--border-color);padding:6px 10px",
    "img": "max-width:100%;height:auto;display:block;margin:1em auto",
    "hr": "border:0;border-top:1px solid var(--border-color);margin:2em 0",
    "refs_heading": "font-size:1.1em;" + _HEADING,
    "refs_item": "margin:0.3em 0;font-size:0.85em;color:var(--muted-color);word-break:break-all",
}


def _theme(code_style, variables=None, styles=None):
    return {
        "codeStyle": code_style,  # Pygments style for fenced code
        "cssVariables": {**_BASE_VARIABLES, **(variables or {})},
        "styles": {**_BASE_STYLES, **(styles or {})},
    }


THEMES = dict(
    zip(
        THEME_NAMES,
        (  # rules.vocabulary names them, in this order
            _theme("friendly"),  # default (the pages' names: rules.labels.THEME_LABELS)
            _theme(  # tech-blue
                "one-dark",
                {
                    "--primary-color": "#1e6fff",
                    "--heading-color": "#1a2b4c",
                    "--quote-background": "#f0f5ff",
                    "--table-header-background": "#eef3fc",
                    "--inline-code-background": "#eef3fc",
                    "--code-background": "#282c34",
                    "--code-color": "#abb2bf",
                },
                {
                    "h2": "font-size:1.3em;padding-left:0.6em;border-left:4px solid var(--primary-color);" + _HEADING,
                    "strong": "color:var(--primary-color)",
                },
            ),
            _theme(  # warm-paper
                "solarized-light",
                {
                    "--primary-color": "#b5651d",
                    "--font-size": "15px",
                    "--line-height": "1.9",
                    "--text-color": "#3d3426",
                    "--heading-color": "#5a3e1b",
                    "--muted-color": "#7a6a55",
                    "--border-color": "#e6d9c3",
                    "--background-color": "#fdf8ee",
                    "--quote-background": "#f6ecd9",
                    "--table-header-background": "#f3e7d2",
                    "--inline-code-background": "#f3e7d2",
                    "--code-background": "#fdf6e3",
                    "--code-color": "#657b83",
                },
                {"wrapper": _BASE_STYLES["wrapper"] + ";padding:1em 1.2em"},
            ),
        ),
        strict=True,
    )
)

# Values end up inside style="…": allow what colours, lengths and font lists need and nothing
# that could close the declaration (;), open a block, pull a URL or start a comment.
_SAFE_VALUE = re.compile(r"[\w\s#%(),.'\"+\-]+")
_FORBIDDEN_IN_VALUE = ("url(", "expression(", "javascript", "image(", "image-set(")
_VAR_REF = re.compile(r"var\((--[a-z0-9-]+)\)")


def resolve_name(theme_template: str | None) -> str:
    """None/empty means default; an unknown name is a ValueError naming the valid ones."""
    name = theme_template or "default"
    if name not in THEMES:
        raise ValueError(f"unknown theme template {name!r}; choose one of: {', '.join(THEMES)}")
    return name


def _variables_of(config):
    """Accept {"cssVariables": {...}} (the stored shape) or a bare {"--x": ...} map."""
    if not config:
        return {}
    if not isinstance(config, dict):
        raise ValueError("theme config must be an object with a cssVariables map")
    variables = config["cssVariables"] if "cssVariables" in config else config
    if not isinstance(variables, dict):
        raise ValueError("themeConfig.cssVariables must be an object of CSS variable name to value")
    return variables


def merged_variables(name: str, config: dict[str, Any] | None) -> dict[str, str]:
    """The template's variables overlaid by `config`'s, each override checked."""
    merged = dict(THEMES[name]["cssVariables"])
    for key, value in _variables_of(config).items():
        if key not in merged:
            raise ValueError(f"unknown CSS variable {key!r}; known variables: {', '.join(merged)}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        text = value.strip() if isinstance(value, str) else ""
        if text == "" and isinstance(value, str) and not THEMES[name]["cssVariables"][key]:
            merged[key] = ""  # left unset, as the theme leaves it (the body's font-family)
            continue
        if len(text) > 200 or not _SAFE_VALUE.fullmatch(text) or any(b in text.lower() for b in _FORBIDDEN_IN_VALUE):
            raise ValueError(
                f"CSS variable {key} has an unsafe or invalid value {value!r}; "
                "use a plain CSS value such as #1e6fff, 16px, 1.75 or a list of font names"
            )
        merged[key] = text
    return merged


def theme_config(theme_template: str | None, account_overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """{"cssVariables": {...}}: the template's defaults overlaid by per-account overrides (else ValueError)."""
    name = resolve_name(theme_template)
    return {"cssVariables": merged_variables(name, account_overrides)}


@lru_cache(maxsize=256)
def _resolved(name, variable_items):
    variables = dict(variable_items)

    def substitute(style):
        # A variable left empty (the body's font-family by default) drops its declaration. Values may quote
        # font names; as text of style="…" a double quote must be escaped.
        declarations = _VAR_REF.sub(lambda m: variables[m.group(1)], style).split(";")
        return ";".join(d for d in declarations if not d.rstrip().endswith(":")).replace('"', "&quot;")

    return {role: substitute(style) for role, style in THEMES[name]["styles"].items()}


def resolve_styles(name: str, variables: dict[str, str]) -> dict[str, str]:
    """Role -> inline style with every var(--x) replaced; cached per (theme, variables)."""
    return _resolved(name, tuple(sorted(variables.items())))

"""Task package (docs/api.md §7): archive contents, every state, faulty images, streaming and cleanup."""

import os
import re
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from models import Asset, db
from rules.vocabulary import STATUSES
from services.rendering import image_urls
from tests.helpers.app import assert_error, create_admin, login, signed_in_admin
from tests.helpers.export import (
    ImageServer,
    download,
    image_bytes,
    link_outside,
    make_task,
    noise_png,
    open_zip,
    remote_asset,
    stored_path,
    temp_entries,
    upload,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

LOCAL_HOSTS = {"REVIEW_REMOTE_IMAGE_HOSTS": "127.0.0.1", "REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE": True}


@pytest.fixture
def image_server():
    server = ImageServer()
    yield server
    server.stop()


@pytest.fixture
def local_app(make_app):
    """An app allowed to fetch remote images from the test server on 127.0.0.1."""
    application = make_app(**LOCAL_HOSTS)
    yield application
    if not db.is_closed():
        db.close()


@pytest.fixture
def admin(local_app):
    return signed_in_admin(local_app)


def viewer_images(text):
    """Image sources a Markdown viewer (raw HTML on) would load from `text`: image syntax, and any
    src, href or poster address in raw HTML."""
    found = []
    for token in MarkdownIt("commonmark").parse(text):
        for part in [token, *(token.children or [])]:
            if part.type == "image":
                found.append(part.attrGet("src"))
            elif part.type in ("html_block", "html_inline"):
                found += re.findall(r"\b(?:src|href|poster)=[\"']?([^\"'\s>]+)", part.content, re.I)
    return found


# ---- archive contents -------------------------------------------------------------------------
def test_article_package_holds_final_selections_with_images_rewritten(local_app, admin, image_server):
    cover = upload(admin, image_bytes(size=(90, 50)))
    inline = upload(admin, image_bytes("JPEG", color=(200, 10, 10)), name="inline.jpg")
    library = upload(admin, image_bytes(color=(10, 200, 10)), scope="library")
    listed_only = upload(admin, image_bytes(color=(10, 10, 200)))
    unused = upload(admin, image_bytes(color=(250, 250, 0)))
    remote_data = image_bytes(color=(1, 2, 3))
    remote = remote_asset(image_server.add("m.png", remote_data))
    body = (
        f'Intro ![inline](<{inline["url"]}> "Inline") and ![lib]({library["url"]}).\n\n'
        f"![remote][r]\n\nSee [the site](https://example.com/page) and [the file]({inline['url']}).\n\n"
        f"[r]: {remote['url']}\n"
    )
    summary = "Summary ![sneaky](http://elsewhere.example/x.png) *kept as text*"
    selections = {
        "title": "The final title",
        "summary": summary,
        "author": "Ann",
        "body": body,
        "coverImage": cover["url"],
        "bodyImages": [{"assetId": listed_only["assetId"]}, inline["url"]],
    }
    candidates = {
        "titles": ["Unused candidate title"],
        "coverImages": [unused["url"]],
        "bodyOptions": [{"id": "b1", "outline": "a|b", "focuses": [], "content": "Unused candidate body"}],
    }
    draft = {
        "markdown": body,
        "sourceBodyCandidateId": "b1",
        "sourceBodyCandidate": "Unused candidate body",
        "bodyEditedFromCandidate": True,
        "themeTemplate": "default",
    }
    task_id = make_task(selections=selections, body_draft=draft, candidates=candidates, status="approved")

    response = download(admin, task_id)
    assert response.headers["Content-Type"] == "application/zip"
    assert response.headers["Content-Disposition"] == f'attachment; filename="review-{task_id}.zip"'
    archive = open_zip(response)
    assert archive.testzip() is None
    names = archive.namelist()
    expected_images = [
        f"images/cover-{cover['assetId']}.png",
        f"images/{listed_only['assetId']}.png",
        f"images/{inline['assetId']}.jpg",
        f"images/{library['assetId']}.png",
        f"images/{remote['assetId']}.png",
    ]
    assert names == ["manuscript.md", "images/", *expected_images]
    for name, source in zip(expected_images, (cover, listed_only, inline, library), strict=False):
        assert archive.read(name) == stored_path(local_app, source).read_bytes()
    assert archive.read(expected_images[-1]) == remote_data

    text = archive.read("manuscript.md").decode("utf-8")
    linked = image_urls(text)
    assert linked and all(src in names and src.startswith("images/") for src in linked)
    assert set(linked) == {expected_images[0], expected_images[2], expected_images[3], expected_images[4]}
    assert "/uploads/" not in text and image_server.base not in text
    assert "[the site](https://example.com/page)" in text  # plain hyperlinks are left alone
    assert f"[the file](images/{inline['assetId']}.jpg)" in text  # a link to an exported image follows it
    assert '"Inline"' in text  # the image title survives the rewrite
    assert "# The final title" in text and "silicon-rise" in text and "Ann" in text
    assert "\\!\\[sneaky\\](http://elsewhere.example/x.png)" in text  # escaped: shown as text, no image
    assert f"[{expected_images[1]}]({expected_images[1]})" in text  # bodyImages listed
    assert "Unused candidate" not in text and unused["assetId"] not in " ".join(names)
    assert temp_entries(local_app) == []


def test_image_post_package_keeps_the_selection_order(local_app, admin):
    first, second, third = (upload(admin, image_bytes(size=(60, 80), color=(c, 0, 0))) for c in (10, 20, 30))
    selections = {
        "title": "Three photos",
        "description": "Line one\n\n- not a list",
        "images": [{"assetId": third["assetId"]}, {"assetId": first["assetId"]}, {"assetId": second["assetId"]}],
        "coverCrop": {
            "assetId": third["assetId"],
            "cropPercentList": [{"ratio": "3_4", "x1": 0, "y1": 0, "x2": 1, "y2": 1}],
        },
        "commentSettings": {"needOpenComment": True, "onlyFansCanComment": False},
    }
    candidates = {
        "titles": ["Candidate title"],
        "descriptions": ["Candidate description"],
        "imageGroups": [{"id": "g", "images": [{"assetId": first["assetId"]}]}],
    }
    task_id = make_task("image_post", selections=selections, candidates=candidates)

    archive = open_zip(download(admin, task_id))
    ordered = [
        f"images/01-{third['assetId']}.png",
        f"images/02-{first['assetId']}.png",
        f"images/03-{second['assetId']}.png",
    ]
    assert archive.namelist() == ["manuscript.md", "images/", *ordered]
    for name, source in zip(ordered, (third, first, second), strict=True):
        assert archive.read(name) == stored_path(local_app, source).read_bytes()
    text = archive.read("manuscript.md").decode()
    assert image_urls(text) == ordered  # cover first (it is the first image), then each in order
    assert "# Three photos" in text and "Line one" in text and "\\- not a list" in text
    assert "Comments: open" in text and "Candidate" not in text


@pytest.mark.parametrize("status", STATUSES)
def test_every_state_can_be_downloaded(local_app, admin, status):
    cover = upload(admin, image_bytes(size=(90, 50)))
    selections = {"title": f"In {status}", "coverImage": {"assetId": cover["assetId"]}}
    task_id = make_task(status=status, selections=selections)
    archive = open_zip(download(admin, task_id))
    assert archive.namelist() == ["manuscript.md", "images/", f"images/cover-{cover['assetId']}.png"]
    assert f"# In {status}" in archive.read("manuscript.md").decode()


def test_task_without_selections_exports_its_topic_only(local_app, admin):
    candidate = upload(admin, image_bytes())
    task_id = make_task(
        topic="Only the topic",
        candidates={
            "titles": ["Candidate title"],
            "coverImages": [candidate["url"]],
            "bodyOptions": [{"id": "b1", "outline": "x", "focuses": [], "content": f"Body ![i]({candidate['url']})"}],
        },
    )
    archive = open_zip(download(admin, task_id))
    assert archive.namelist() == ["manuscript.md", "images/"]
    text = archive.read("manuscript.md").decode()
    assert text.startswith("# Only the topic\n")
    assert "Candidate" not in text and "Body" not in text and image_urls(text) == []


# ---- faulty images: 409 and nothing left behind -----------------------------------------------
def _break_asset_row(app, admin, server):
    asset = upload(admin, image_bytes(size=(90, 50)))
    with db.connection_context():
        Asset.delete().where(Asset.asset_id == asset["assetId"]).execute()
    return {"coverImage": {"assetId": asset["assetId"]}}, asset["assetId"]


def _remove_file(app, admin, server):
    asset = upload(admin, image_bytes(size=(90, 50)))
    stored_path(app, asset).unlink()
    return {"coverImage": asset["url"]}, asset["url"]


def _damage(fmt, keep):
    def build(app, admin, server):
        asset = upload(admin, image_bytes(fmt, size=(300, 300)), name=f"x.{fmt.lower()}")
        path = stored_path(app, asset)
        path.write_bytes(keep(path.read_bytes()))
        return {"bodyImages": [{"assetId": asset["assetId"]}]}, asset["assetId"]

    return build


def _remote(url_of):
    def build(app, admin, server):
        asset = remote_asset(url_of(server))
        return {"body": f"![r]({asset['url']})"}, asset["url"]

    return build


def _external_link(app, admin, server):
    url = "https://not-allowed.example/pic.png"
    return {"body": f"Text ![ext]({url})"}, url


def _file_link(app, admin, server):
    url = "file:///etc/passwd"
    return {"body": f"Text ![leak]({url})"}, url


def _redirect_elsewhere(server):
    return f"{server.base}/redirect?to=http://localhost:{server.base.rsplit(':', 1)[1]}/img/a.png"


DAMAGED = "truncated or damaged"
NOT_LISTED = "not in REVIEW_REMOTE_IMAGE_HOSTS"
FAULTS = {  # name: (build, app settings, expected reason)
    "asset gone": (_break_asset_row, {}, "no longer exists"),
    "file missing": (_remove_file, {}, "stored file is missing"),
    "undecodable png": (_damage("PNG", lambda data: data[:-30]), {}, DAMAGED),  # cut before IEND: CRC walk
    "undecodable jpeg": (_damage("JPEG", lambda data: data[:400]), {}, DAMAGED),
    "remote error": (_remote(lambda s: f"{s.base}/status/500"), {}, "HTTP 500"),
    "remote not an image": (_remote(lambda s: s.add("junk.png", b"<html>no</html>")), {}, "not a PNG, JPEG"),
    "remote over 10 MiB": (_remote(lambda s: f"{s.base}/big"), {}, "larger than 10 MiB"),
    "remote host not allowed": (
        _remote(lambda s: s.add("a.png", image_bytes())),
        {"REVIEW_REMOTE_IMAGE_HOSTS": "mmbiz.qpic.cn"},
        NOT_LISTED,
    ),
    "remote loopback refused": (
        _remote(lambda s: s.add("a.png", image_bytes())),
        {"REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE": False},
        "non-public address",
    ),
    "redirect elsewhere": (_remote(_redirect_elsewhere), {}, "host localhost is " + NOT_LISTED),
    # An image link that is no asset is fetched only from an allowed host (the archive must be
    # complete); anywhere else it refuses the export like any other faulty image.
    "external link": (_external_link, {}, "host not-allowed.example is " + NOT_LISTED),
    "file: link": (_file_link, {}, "only http and https"),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_faulty_final_image_refuses_the_export_and_leaves_no_file(make_app, image_server, fault):
    build, settings, reason = FAULTS[fault]
    app = make_app(**{**LOCAL_HOSTS, **settings})
    admin = signed_in_admin(app)
    good = upload(admin, image_bytes(size=(90, 50), color=(5, 5, 5)))
    faulty_selection, ref = build(app, admin, image_server)
    task_id = make_task(selections={"title": "T", "coverImage": good["url"], **faulty_selection})
    error = assert_error(download(admin, task_id), 409, "export_failed")
    listed = error["details"]["faultyImages"]
    assert [item["ref"] for item in listed] == [ref]
    assert reason in listed[0]["reason"]
    assert temp_entries(app) == []


def test_links_to_chosen_images_and_raw_html_images_stay_inside_the_archive(local_app, admin, image_server):
    """A hyperlink to the cover or a listed body image (no image link of its own) follows its file;
    raw HTML image tags, which the service renders as text, become text a viewer cannot load."""
    cover = upload(admin, image_bytes(size=(90, 50)))
    listed = upload(admin, image_bytes("JPEG", color=(200, 10, 10)), name="listed.jpg")
    outside = image_server.add("pixel.png", image_bytes(color=(5, 5, 5)))
    body = (
        f"See [the listed image]({listed['url']}) and [the cover]({cover['url']}).\n\n"
        f'<img src="{outside}">\n\n<p>Inline <IMG src="{listed["url"]}"/> in a block</p>\n\n'
        f"Text with <img src={outside}> inline and `<img src=code>` in code.\n\n"
        # Found by review: nested HTML blocks, other tags that load images, a code span over two lines.
        f'> <div>\n> \\<img src="{outside}">\n> </div>\n\n- <div>\n  <image src="{outside}">\n  </div>\n\n'
        f'<video poster="{outside}"></video> and <svg><image href="{outside}"/></svg>\n\n'
        "A span `over\n<img src=two-lines>` of code, <https://example.com/page> stays a link.\n\n"
        "```\n<img src=fenced>\n```\n"
    )
    task_id = make_task(
        selections={
            "title": "T",
            "body": body,
            "coverImage": cover["url"],
            "bodyImages": [{"assetId": listed["assetId"]}],
        }
    )

    archive = open_zip(download(admin, task_id))
    text = archive.read("manuscript.md").decode("utf-8")
    assert f"[the listed image](images/{listed['assetId']}.jpg)" in text
    assert f"[the cover](images/cover-{cover['assetId']}.png)" in text
    assert viewer_images(text) == [f"images/cover-{cover['assetId']}.png"]  # only the Cover section's
    assert image_server.hits == []  # an image no one chose is not fetched either
    assert "`<img src=code>`" in text and "```\n<img src=fenced>\n```" in text  # code is left as written
    assert "`over\n<img src=two-lines>`" in text and "<https://example.com/page>" in text
    viewer = MarkdownIt("commonmark").parse(text)
    assert not [t for t in viewer if t.type == "html_block"]
    assert not [c for t in viewer for c in t.children or () if c.type == "html_inline"]


@pytest.mark.parametrize(
    "trick",
    [
        "| a |\n| - |\n    <img src={url}>\n",  # code to a reader with tables, a paragraph to one without
        '| ](<img src="{url}" alt="|"> | c |\n| - | - |\n',  # a tag hidden by a table split
        "[a]: javascript:void(0)\n    ![x]({url})\n",  # a definition some readers refuse
    ],
)
def test_no_markdown_reader_loads_an_image_from_outside_the_archive(local_app, admin, image_server, trick):
    """Readers differ (tables or not, link schemes): what any of them would load from elsewhere
    is escaped, or else the export is refused; it never leaves in the archive."""
    from services.export.manuscript import _VIEWERS

    outside = image_server.add("pixel.png", image_bytes(color=(5, 5, 5)))
    cover = upload(admin, image_bytes(size=(90, 50)))
    task_id = make_task(
        selections={"title": "T", "body": "Text.\n\n" + trick.format(url=outside), "coverImage": cover["url"]}
    )
    response = download(admin, task_id)
    if response.status_code == 409:
        assert assert_error(response, 409, "export_failed")["details"]["faultyImages"]
        return
    text = open_zip(response).read("manuscript.md").decode("utf-8")
    for parser in _VIEWERS:
        tokens = parser.parse(text)
        assert not [t for t in tokens if t.type == "html_block"]
        inline = [c for t in tokens for c in t.children or ()]
        assert not [c for c in inline if c.type == "html_inline"]
        assert all(c.attrGet("src").startswith("images/") for c in inline if c.type == "image")


def test_a_body_at_the_size_limit_is_escaped_span_by_span():
    """200,000 characters of code spans and tags (bench-style timing lives in the closing note, not here)."""
    from services.export.manuscript import rewrite_images

    out, left = rewrite_images("`a` <b " * 28000, {})
    assert out.count("\\<b") == 28000 and out.count("`a`") == 28000 and left == []


def test_a_stored_file_linked_outside_the_uploads_folder_is_not_exported(local_app, admin, tmp_path):
    asset = upload(admin, image_bytes(size=(90, 50)))
    link_outside(local_app, asset, tmp_path / "secret.png")
    task_id = make_task(selections={"coverImage": asset["url"]})
    error = assert_error(download(admin, task_id), 409, "export_failed")
    assert "outside the uploads folder" in error["details"]["faultyImages"][0]["reason"]


def test_an_allowed_external_image_link_is_fetched_into_the_archive(local_app, admin, image_server):
    data = image_bytes(color=(3, 3, 3))
    url = image_server.add("ext.png", data)
    task_id = make_task(selections={"body": f"![outside]({url})"})
    archive = open_zip(download(admin, task_id))
    (name,) = [n for n in archive.namelist() if n.startswith("images/external-")]
    assert archive.read(name) == data
    assert image_urls(archive.read("manuscript.md").decode()) == [name]


def test_every_faulty_image_is_listed_at_once(local_app, admin):
    gone = upload(admin, image_bytes(size=(90, 50)))
    missing = upload(admin, image_bytes(color=(9, 9, 9)))
    stored_path(local_app, gone).unlink()
    stored_path(local_app, missing).unlink()
    task_id = make_task(selections={"coverImage": gone["url"], "bodyImages": [{"assetId": missing["assetId"]}]})
    error = assert_error(download(admin, task_id), 409, "export_failed")
    assert [(i["ref"], i["field"]) for i in error["details"]["faultyImages"]] == [
        (gone["url"], "selections.coverImage"),
        (missing["assetId"], "selections.bodyImages.0"),
    ]


def test_a_redirect_on_the_allowed_host_is_followed(local_app, admin, image_server):
    data = image_bytes(color=(7, 7, 7))
    target = image_server.add("moved.png", data)
    asset = remote_asset(f"{image_server.base}/redirect?to={target}")
    task_id = make_task("image_post", selections={"images": [{"assetId": asset["assetId"]}]})
    archive = open_zip(download(admin, task_id))
    assert archive.read(f"images/01-{asset['assetId']}.png") == data
    assert image_server.hits[-1] == "/img/moved.png?"


# ---- credentials, streaming and cleanup --------------------------------------------------------
def test_package_needs_an_admin_session_with_review_permission(local_app, admin, agent_headers):
    task_id = make_task()
    assert_error(
        local_app.test_client().get(f"/api/review/tasks/{task_id}/package", headers=agent_headers), 401, "unauthorized"
    )
    create_admin("fb", permissions="feedback")
    feedback_only = local_app.test_client()
    login(feedback_only, "fb")
    assert_error(download(feedback_only, task_id), 403, "forbidden")
    assert_error(download(admin, "no-such-task"), 404, "not_found")


def test_the_temporary_archive_is_removed_after_download_and_after_a_disconnect(local_app, admin):
    images = [upload(admin, noise_png()) for _ in range(5)]
    task_id = make_task("image_post", selections={"images": [{"assetId": a["assetId"]} for a in images]})
    full = download(admin, task_id)
    assert len(open_zip(full).namelist()) == 7
    assert temp_entries(local_app) == []

    partial = admin.get(f"/api/review/tasks/{task_id}/package", buffered=False)
    chunk = next(partial.response)
    assert chunk.startswith(b"PK")
    assert len(temp_entries(local_app)) == 1  # still there while it is being sent
    assert int(partial.headers["Content-Length"]) > len(chunk)
    partial.close()  # what the server does when the client goes away
    assert temp_entries(local_app) == []


def test_openapi_documents_the_package_and_delete_routes(local_app, admin):
    spec = admin.get("/api/openapi.json").get_json()
    package = spec["paths"]["/api/review/tasks/{task_id}/package"]["get"]
    assert "application/zip" in package["responses"]["200"]["content"]
    assert package["security"] == [{"adminSession": []}]
    delete = spec["paths"]["/api/review/tasks/{task_id}"]["delete"]
    assert delete["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/DeleteResult")


@pytest.mark.parametrize(
    "body, rewritten",
    [
        ("> ![x][r]\n>\n> [r]: /u/a.png\n", "> [r]: images/a.png"),  # in a quote (was refused: left unrewritten)
        ("> > [r]:\n> > /u/a.png\n\n![x][r]\n", "> > images/a.png"),  # the destination on the next line
        ("- [r]: /u/a.png\n\n![x][r]\n", "- [r]: images/a.png"),  # in a list item
        ("> [doc]: <https://example.com/my doc.pdf>\n\n[x][doc]\n", "<https://example.com/my doc.pdf>"),  # kept a link
    ],
)
def test_link_definitions_inside_quotes_and_lists_are_read_as_definitions(body, rewritten):
    from services.export.manuscript import rewrite_images

    out, left = rewrite_images(body, {"/u/a.png": "images/a.png"})
    assert rewritten in out and left == []


@pytest.mark.parametrize(
    "text, spans",
    [
        ("a `b` c", [(2, 5)]),
        ("``a`b``", [(0, 7)]),  # a run closes only at a run of its own length
        ("\\`a` `b`", [(3, 6)]),  # an escaped backtick opens none; the next run opens instead
        ("`a\nb`", [(0, 5)]),  # over a line break
        ("`a\n \nb`", []),  # never over a blank line
        ("``` ` ``` `", [(0, 9)]),
    ],
)
def test_code_spans_follow_backtick_runs(text, spans):
    from services.export.manuscript import _code_spans

    assert _code_spans(text) == spans


def test_a_deep_quote_that_is_no_definition_does_not_make_the_rewrite_backtrack():
    """Every split of the spaces between 40 `>` was tried (2^40 steps) while the package download
    held the GIL, freezing the whole service. A subprocess, so a regression fails instead of hanging."""
    import subprocess
    import sys
    from pathlib import Path

    body = "# t\n\n" + "> " * 40 + "x\n"
    script = (
        "import sys; from services.export.manuscript import rewrite_images; print(rewrite_images(sys.stdin.read(), {}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=body,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == repr((body, []))


def _delete_now(app, task_id):
    from services.task_delete import delete_task

    result = delete_task(task_id, app.extensions["settings"])
    assert result["deletedFileCount"] == 2


def _photo_task(admin):
    photos = [upload(admin, image_bytes(size=(60, 80), color=(c, 0, 0))) for c in (10, 20)]
    selections = {
        "title": "Two photos",
        "images": [{"assetId": p["assetId"]} for p in photos],
        "commentSettings": {"needOpenComment": True, "onlyFansCanComment": False},
    }
    return photos, make_task("image_post", selections=selections)


def test_a_package_built_while_its_task_is_deleted_is_whole(local_app, admin, monkeypatch):
    """The delete lands after the images were checked: the archive is still written from them."""
    from services.export import package

    photos, task_id = _photo_task(admin)
    contents = [stored_path(local_app, p).read_bytes() for p in photos]
    manuscript_of = package._manuscript

    def delete_first(*args):
        _delete_now(local_app, task_id)
        return manuscript_of(*args)

    monkeypatch.setattr(package, "_manuscript", delete_first)
    archive = open_zip(download(admin, task_id))

    assert [archive.read(name) for name in archive.namelist() if name.endswith(".png")] == contents
    assert not any(stored_path(local_app, p).exists() for p in photos)  # the delete went through


def test_a_package_whose_task_is_deleted_before_its_images_are_read_is_404(local_app, admin, monkeypatch):
    """Not 409 export_failed ("missing or faulty images") for a task that no longer exists."""
    from services.export import package

    _, task_id = _photo_task(admin)
    check = package._check_sources

    def delete_first(*args):
        _delete_now(local_app, task_id)
        return check(*args)

    monkeypatch.setattr(package, "_check_sources", delete_first)
    assert_error(download(admin, task_id), 404, "not_found")
    assert not list((Path(local_app.config["REVIEW_INSTANCE_PATH"]) / "tmp").glob("*"))


def test_package_folders_of_a_stopped_process_are_swept_at_start(make_app, tmp_path):
    """A crash while a ZIP was built or streamed left its folder for 6 hours (kill -9 during downloads)."""
    import os
    import subprocess
    import sys

    ended = int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
        ).stdout
    )
    from services.owners import file_tag

    here = file_tag().partition(".")[2]  # this host's, as a folder's name carries it
    temp = tmp_path / "instance" / "tmp"
    for pid in (ended, os.getppid()):
        (temp / f"package-{pid}.{here}-x").mkdir(parents=True)
        (temp / f"package-{pid}.{here}-x" / "package.zip").write_bytes(b"partial")
    (temp / f"package-{ended}.0another-x").mkdir()  # another host's: its pid says nothing here, its age decides

    application = make_app(**LOCAL_HOSTS)
    kept = [f"package-{ended}.0another-x", f"package-{os.getppid()}.{here}-x"]  # a live process keeps its own
    assert sorted(p.name for p in temp.iterdir()) == sorted(kept)

    (temp / f"package-{file_tag()}-y").mkdir()  # this process's own, in use while it serves
    admin = signed_in_admin(application)
    open_zip(download(admin, make_task(selections={"title": "T"})))
    assert sorted(p.name for p in temp.iterdir()) == sorted([*kept, f"package-{file_tag()}-y"])
    old = time.time() - 7 * 3600
    for folder in temp.iterdir():  # a live process of this host keeps its folder however old
        os.utime(folder, (old, old))
    make_app(**LOCAL_HOSTS)  # the next start: another host's folder of 7 hours is left over (and its own, a
    assert sorted(p.name for p in temp.iterdir()) == [kept[1]]  # predecessor's with the same pid, as before)


def test_a_full_disk_while_packing_is_named_and_leaves_nothing(local_app, admin, monkeypatch):
    """It was a bare 500 internal_error, logged as 'unexpected OSError at zipfile.py'."""
    import errno

    from services.export import package

    _, task_id = _photo_task(admin)

    def disk_full(path, *_args):
        Path(path).write_bytes(b"PK partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(package, "_write_zip", disk_full)
    error = assert_error(download(admin, task_id), 500, "storage_unavailable")
    assert "no space left" in error["message"]
    assert not list((Path(local_app.config["REVIEW_INSTANCE_PATH"]) / "tmp").glob("*"))


def test_a_package_of_many_images_holds_one_file_open_at_a_time(local_app, admin):
    """Holding every checked image open ran out of file descriptors on a task of many images."""
    import resource

    photos = [upload(admin, image_bytes(size=(20, 20), color=(n, n, 0))) for n in range(120)]
    body = "\n\n".join(f"![p{n}]({p['url']})" for n, p in enumerate(photos))
    task_id = make_task(selections={"title": "Many", "body": body, "coverImage": photos[0]["url"]})
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = len(os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (in_use + 60, hard))  # fewer than the task's images
    try:
        archive = open_zip(download(admin, task_id))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len([name for name in archive.namelist() if name.endswith(".png")]) == 121  # the cover once more


def test_a_command_beside_the_service_leaves_its_folders_alone(make_app, tmp_path):
    """A command may run in another container sharing the instance: a pid there says nothing here."""
    import subprocess
    import sys

    make_app()
    ended = int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
        ).stdout
    )
    from services.owners import file_tag

    folder = tmp_path / "instance" / "tmp" / f"package-{ended}.{file_tag().partition('.')[2]}-x"
    folder.mkdir(parents=True)
    env = {
        **os.environ,
        "REVIEW_INSTANCE_PATH": str(tmp_path / "instance"),
        "REVIEW_UPLOADS_PATH": str(tmp_path / "uploads"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "deactivate-admin", "nobody"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "nobody" in done.stdout + done.stderr and folder.exists()
    make_app()  # the service's own start settles it
    assert not folder.exists()


def test_archived_images_unpack_readable_and_stamped_like_the_manuscript(local_app, admin, monkeypatch):
    """The images took the work-folder copy's mode (umask) and local time; manuscript.md is UTC."""
    import time as clock

    _, task_id = _photo_task(admin)
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    clock.tzset()
    old_mask = os.umask(0o077)
    try:
        archive = open_zip(download(admin, task_id))
    finally:
        os.umask(old_mask)
        monkeypatch.delenv("TZ")
        clock.tzset()
    manuscript = archive.getinfo("manuscript.md")
    images = [info for info in archive.infolist() if info.filename.endswith(".png")]
    assert len(images) == 2
    for info in images:
        assert info.external_attr >> 16 == 0o644 and info.date_time == manuscript.date_time

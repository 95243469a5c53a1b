"""Asset upload, storage, serving, listing and reference resolution (docs/api.md §6)."""

import hashlib
import io
from pathlib import Path

import peewee
import pytest
from PIL import Image

from models import Asset, db
from services import asset_refs, assets, files
from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.assets import ID_NAME, bomb_png, image_bytes, rows_cut_short

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def upload(client, data, name="photo.png", headers=None, **form):
    payload = {"file": (io.BytesIO(data), name), **form}
    return client.post("/api/assets/upload", data=payload, headers=headers or {}, content_type="multipart/form-data")


def stored_files(app, scope):
    return sorted(p.name for p in (Path(app.config["REVIEW_UPLOADS_PATH"]) / scope).iterdir())


def asset_count():
    with db.connection_context():
        return Asset.select().count()


# ---- accepted formats -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "fmt, mode, stored_ext, content_type",
    [
        ("PNG", "RGBA", "png", "image/png"),
        ("JPEG", "RGB", "jpg", "image/jpeg"),
        ("GIF", "P", "gif", "image/gif"),
        ("WEBP", "RGBA", "png", "image/png"),
    ],
)
def test_each_format_is_stored_with_its_record(app, client, agent_headers, fmt, mode, stored_ext, content_type):
    data = image_bytes(fmt, (64, 48), 1 if mode == "P" else (10, 120, 200, 255)[: len(mode)], mode)
    resp = upload(client, data, name="whatever.bin", headers=agent_headers)
    assert resp.status_code == 201, resp.get_json()
    body = resp.get_json()
    assert set(body) == {
        "assetId",
        "scope",
        "url",
        "fileName",
        "contentType",
        "width",
        "height",
        "size",
        "sha256",
        "createdAt",
    }
    assert (body["scope"], body["contentType"], body["width"], body["height"]) == ("review", content_type, 64, 48)
    assert body["url"] == f"/uploads/review/{body['assetId']}.{stored_ext}"
    path = Path(app.config["REVIEW_UPLOADS_PATH"]) / "review" / f"{body['assetId']}.{stored_ext}"
    stored = path.read_bytes()
    assert (body["size"], body["sha256"]) == (len(stored), hashlib.sha256(stored).hexdigest())
    assert Image.open(io.BytesIO(stored)).format == {"jpg": "JPEG"}.get(stored_ext, stored_ext.upper())
    assert (stored == data) is (fmt != "WEBP")  # only WebP is converted
    with db.connection_context():
        row = Asset.get(Asset.asset_id == body["assetId"])
        assert (row.width, row.height, row.size, row.sha256, row.stored_name) == (
            64,
            48,
            len(stored),
            body["sha256"],
            path.name,
        )


# ---- refusals -----------------------------------------------------------------------------------
PNG = image_bytes()
REFUSED = {
    "disguised_html": b"<!DOCTYPE html><html><script>alert(1)</script></html>",
    "svg": b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>',
    "truncated_png": PNG[: len(PNG) // 2],
    "png_cut_before_iend": PNG[:-12],
    "empty": b"",
    "bmp": image_bytes("BMP"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_files_leave_nothing_behind(app, client, agent_headers, case):
    resp = upload(client, REFUSED[case], name="cat.png", headers=agent_headers)
    assert "file" in assert_error(resp, 400, "validation_error")["details"]
    assert stored_files(app, "review") == [] and asset_count() == 0


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
@pytest.mark.parametrize("width, height", [(20000, 20000), (7000, 7000)])
def test_decompression_bombs_are_refused_from_the_header(app, client, agent_headers, width, height):
    data = bomb_png(width, height)
    assert len(data) < 200_000  # tiny on disk, huge once decoded
    error = assert_error(upload(client, data, headers=agent_headers), 400, "validation_error")
    assert "pixels" in error["message"]
    assert stored_files(app, "review") == [] and asset_count() == 0


def test_forty_megapixels_is_still_accepted():
    checked = assets.check_image(bomb_png(8000, 5000))
    assert (checked.width, checked.height, checked.content_type) == (8000, 5000, "image/png")


def test_size_limit(app, client, agent_headers):
    limit = assets.MAX_UPLOAD_BYTES
    exact = PNG + b"\0" * (limit - len(PNG))  # data after IEND is ignored by decoders
    assert upload(client, exact, headers=agent_headers).status_code == 201
    assert_error(upload(client, exact + b"\0", headers=agent_headers), 413, "payload_too_large")
    assert_error(upload(client, exact + b"\0" * limit, headers=agent_headers), 413, "payload_too_large")
    assert len(stored_files(app, "review")) == 1 and asset_count() == 1
    # A declared length over the limit is refused before the body is read (only 7 bytes follow).
    declared = {
        "input_stream": io.BytesIO(b"--x--\r\n"),
        "content_type": "multipart/form-data; boundary=x",
        "environ_overrides": {"CONTENT_LENGTH": str(limit + 65 * 1024)},
    }
    assert_error(client.post("/api/assets/upload", headers=agent_headers, **declared), 413, "payload_too_large")


def test_missing_file_unknown_scope_and_unknown_field(client, agent_headers):
    resp = client.post(
        "/api/assets/upload", data={"scope": "review"}, headers=agent_headers, content_type="multipart/form-data"
    )
    assert "file" in assert_error(resp, 400, "validation_error")["details"]
    assert (
        "scope"
        in assert_error(upload(client, PNG, headers=agent_headers, scope="feedback"), 400, "validation_error")[
            "details"
        ]
    )
    assert (
        "title"
        in assert_error(upload(client, PNG, headers=agent_headers, title="x"), 400, "validation_error")["details"]
    )
    two = {"scope": "review", "file": [(io.BytesIO(PNG), "a.png"), (io.BytesIO(image_bytes(color=(9, 9, 9))), "b.png")]}
    error = assert_error(client.post("/api/assets/upload", data=two, headers=agent_headers), 400, "validation_error")
    assert error["details"] == {"file": ["more than one file"]} and asset_count() == 0


# ---- scope rules, credentials and dedup ---------------------------------------------------------
def test_scope_rules(app, client, admin_client, agent_headers):
    for headers in ({}, {"x-review-agent-token": "wrong"}):
        error = assert_error(upload(client, PNG, headers=headers), 401, "unauthorized")
        assert "x-review-agent-token" in error["message"] and "review_admin_session" in error["message"]
    assert_error(upload(client, PNG, headers=agent_headers, scope="library"), 403, "forbidden")
    assert stored_files(app, "library") == [] and asset_count() == 0
    resp = upload(admin_client, PNG, scope="library")
    assert resp.status_code == 201 and resp.get_json()["scope"] == "library"
    assert upload(admin_client, image_bytes(color=(1, 2, 3))).get_json()["scope"] == "review"
    assert stored_files(app, "library") == [resp.get_json()["url"].rsplit("/", 1)[1]]
    # scope in the query string was ignored, and a library image landed in review
    stray = admin_client.post(
        "/api/assets/upload?scope=library",
        content_type="multipart/form-data",
        data={"file": (io.BytesIO(image_bytes(color=(4, 5, 6))), "x.png")},
    )
    assert "form field" in assert_error(stray, 400, "validation_error")["details"]["scope"][0]
    assert asset_count() == 2


def test_admin_needs_review_permission_and_same_origin(app, admin_client):
    assert_error(upload(admin_client, PNG, headers={"Origin": "https://evil.example"}), 403, "forbidden")
    create_admin("helpdesk", permissions="feedback")
    other = app.test_client()
    login(other, "helpdesk")
    assert_error(upload(other, PNG), 403, "forbidden")
    assert asset_count() == 0


def test_same_bytes_in_the_same_scope_return_the_existing_asset(app, admin_client, agent_headers):
    first = upload(admin_client, PNG, name="a.png")
    again = upload(admin_client, PNG, name="b.png", headers=agent_headers)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.get_json() == first.get_json()
    library = upload(admin_client, PNG, scope="library")
    assert library.status_code == 201 and library.get_json()["assetId"] != first.get_json()["assetId"]
    assert len(stored_files(app, "review")) == 1 and asset_count() == 2


def test_dedup_restores_a_lost_file(app, client, agent_headers):
    body = upload(client, PNG, headers=agent_headers).get_json()
    path = Path(app.config["REVIEW_UPLOADS_PATH"]) / body["url"].removeprefix("/uploads/")
    path.unlink()
    assert upload(client, PNG, headers=agent_headers).status_code == 200
    assert path.read_bytes() == PNG


@pytest.mark.parametrize(
    "client_name, shown",
    [
        ("../../etc/passwd.png", "passwd.png"),
        ("C:\\Users\\me\\cat.png", "cat.png"),
        ("na\u202eme\x00\t.png", "name.png"),
        ("猫.png", "猫.png"),
        ("", "image.png"),
    ],
)
def test_stored_names_never_come_from_the_client(app, client, agent_headers, client_name, shown):
    body = upload(client, PNG, name=client_name, headers=agent_headers).get_json()
    assert body["fileName"] == shown
    assert stored_files(app, "review") == [f"{body['assetId']}.png"]
    assert ID_NAME.match(stored_files(app, "review")[0])


def test_a_failed_insert_removes_the_file(app, monkeypatch):
    def broken_create(**_fields):
        raise peewee.OperationalError("disk I/O error")

    monkeypatch.setattr(Asset, "create", broken_create)
    with db.connection_context(), pytest.raises(peewee.OperationalError):
        assets.save_upload(PNG, scope="review", file_name="x.png", uploads_root=app.config["REVIEW_UPLOADS_PATH"])
    assert stored_files(app, "review") == []


def test_a_concurrent_identical_upload_wins_the_race(app, monkeypatch):
    """Another request inserts the same bytes between our dedup check and our insert."""
    root = app.config["REVIEW_UPLOADS_PATH"]
    write = files.write_atomically

    def write_then_lose_race(folder, name, data):
        path = write(folder, name, data)
        Asset.create(
            asset_id="winner",
            scope="review",
            url="/uploads/review/winner.png",
            stored_name="winner.png",
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            created_at="2026-01-01T00:00:00.000Z",
        )
        return path

    monkeypatch.setattr(files, "write_atomically", write_then_lose_race)
    with db.connection_context():
        asset, created = assets.save_upload(PNG, scope="review", file_name="x.png", uploads_root=root)
        assert (asset.asset_id, created, Asset.select().count()) == ("winner", False, 1)
    # The loser's own file is gone; the winner's (this test's winner has none) is written from the same bytes.
    assert stored_files(app, "review") == ["winner.png"]


# ---- serving ------------------------------------------------------------------------------------
def test_files_are_served_only_with_credentials(app, client, admin_client, agent_headers):
    body = upload(client, image_bytes("JPEG"), headers=agent_headers).get_json()
    for who, headers in ((admin_client, {}), (client, agent_headers)):
        resp = who.get(body["url"], headers=headers)
        assert resp.status_code == 200 and resp.data == image_bytes("JPEG")
        assert resp.headers["Content-Type"] == "image/jpeg"
        assert "private" in resp.headers["Cache-Control"] and "max-age=31536000" in resp.headers["Cache-Control"]
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert_error(client.get(body["url"]), 401, "unauthorized")
    assert_error(client.get(body["url"], headers={"x-review-agent-token": "wrong"}), 401, "unauthorized")
    cached = client.get(body["url"], headers={**agent_headers, "If-None-Match": resp.headers["ETag"]})
    assert cached.status_code == 304


def test_serving_refuses_other_scopes_and_path_tricks(app, client, agent_headers):
    body = upload(client, PNG, headers=agent_headers).get_json()
    uploads = Path(app.config["REVIEW_UPLOADS_PATH"])
    (uploads / "feedback" / "secret.png").write_bytes(PNG)
    (uploads / "review" / ".upload-half.png").write_bytes(PNG)
    name = body["url"].rsplit("/", 1)[1]
    for url in (
        "/uploads/feedback/secret.png",
        "/uploads/review/..%2ffeedback%2fsecret.png",
        "/uploads/review/../feedback/secret.png",
        "/uploads/library/" + name,
        "/uploads/review/.upload-half.png",
        "/uploads/review/missing.png",
    ):
        assert_error(client.get(url, headers=agent_headers), 404, "not_found")
    assert_error(client.get("/uploads/feedback/secret.png"), 401, "unauthorized")


# ---- listing ------------------------------------------------------------------------------------
def test_listing_filters_and_pages(admin_client, agent_headers):
    for index in range(5):
        upload(admin_client, image_bytes(color=(index, 0, 0)), name=f"Sunset {index}.png", scope="library")
    upload(admin_client, image_bytes(color=(9, 9, 9)), name="50%_off.png", scope="library")
    upload(admin_client, image_bytes(color=(7, 7, 7)), name="sunset-review.png")

    def listing(query, headers=None):
        resp = admin_client.get("/api/assets" + query, headers=headers or {})
        assert resp.status_code == 200, resp.get_json()
        return resp.get_json()

    default = listing("")
    assert {a["scope"] for a in default["items"]} == {"library"}
    assert default["pagination"] == {"page": 1, "pageSize": 20, "total": 6, "totalPages": 1}
    assert default["items"][0]["fileName"] == "50%_off.png"  # newest first
    page = listing("?q=SUNSET&pageSize=2&page=3")
    assert page["pagination"] == {"page": 3, "pageSize": 2, "total": 5, "totalPages": 3}
    assert [a["fileName"] for a in page["items"]] == ["Sunset 0.png"]
    assert listing("?q=%25")["pagination"]["total"] == 1  # a literal %, not a wildcard
    assert listing("?q=_")["pagination"]["total"] == 1
    assert listing("?scope=review")["pagination"]["total"] == 1
    assert listing("?scope=all&q=sunset")["pagination"]["total"] == 6
    assert listing("?page=9")["items"] == []
    assert listing("", headers=agent_headers)["pagination"]["total"] == 6


@pytest.mark.parametrize("query", ["page=0", "page=x", "pageSize=0", "pageSize=101", "scope=feedback", "page=1.5"])
def test_listing_bad_values(client, agent_headers, query):
    assert (
        query.split("=")[0]
        in assert_error(client.get(f"/api/assets?{query}", headers=agent_headers), 400, "validation_error")["details"]
    )
    assert_error(client.get(f"/api/assets?{query}"), 401, "unauthorized")  # credentials first


def test_one_asset_by_id(client, agent_headers):
    body = upload(client, PNG, headers=agent_headers).get_json()
    assert client.get(f"/api/assets/{body['assetId']}", headers=agent_headers).get_json() == body
    assert_error(client.get("/api/assets/nope", headers=agent_headers), 404, "not_found")
    assert_error(client.get("/api/assets/nope"), 401, "unauthorized")


# ---- references ---------------------------------------------------------------------------------
def test_references_resolve_by_id_and_url(client, agent_headers):
    body = upload(client, PNG, headers=agent_headers).get_json()
    with db.connection_context():
        assert asset_refs.resolve_ref({"assetId": body["assetId"]}).asset_id == body["assetId"]
        assert asset_refs.resolve_ref(body["url"]).asset_id == body["assetId"]
        for missing in ({"assetId": "nope"}, "/uploads/review/nope.png", "", None, {"id": body["assetId"]}, 7):
            assert asset_refs.resolve_ref(missing) is None
        found = asset_refs.resolve_many([body["url"], {"assetId": "nope"}, {"assetId": body["assetId"]}, 3])
        assert [a and a.asset_id for a in found.values()] == [body["assetId"], None, body["assetId"], None]


def test_markdown_image_references():
    rendering = pytest.importorskip("services.rendering", reason="services.rendering is not written yet")
    if not hasattr(rendering, "image_urls"):
        pytest.skip("services.rendering.image_urls is not written yet")
    markdown = (
        "Intro ![a](/uploads/library/x.png) and [link](https://e.x/y.png)\n\n![b](https://mmbiz.qpic.cn/z)"
        "\n\n![again](/uploads/library/x.png)"
    )
    assert asset_refs.markdown_image_refs(markdown) == ["/uploads/library/x.png", "https://mmbiz.qpic.cn/z"]


def test_a_link_out_of_the_upload_folder_is_not_served(app, admin_client, agent_headers):
    """A symlink in uploads/review/ to instance/secret_key served the key (docs/api.md §6: files are served
    only when their real path is inside their folder)."""
    import os
    from pathlib import Path

    review = Path(app.config["REVIEW_UPLOADS_PATH"]) / "review"
    os.symlink(Path(app.instance_path) / "secret_key", review / "leak.png")
    inside_target = review / "kept.png"
    inside_target.write_bytes(b"\x89PNG inside the folder")
    os.symlink(inside_target, review / "alias.png")
    for client, headers in ((admin_client, {}), (app.test_client(), agent_headers)):
        response = client.get("/uploads/review/leak.png", headers=headers)
        assert response.status_code == 404 and app.secret_key.encode() not in response.data
        assert client.get("/uploads/review/alias.png", headers=headers).status_code == 200


@pytest.mark.parametrize("interlace", [False, True])
def test_a_png_whose_rows_are_cut_short_is_refused(app, admin_client, interlace):
    """Pillow decoded it without complaint, blank below the cut (docs/api.md §16: every pixel row must decode)."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (120, 90), (200, 30, 30)).save(buffer, "PNG", interlace=interlace)
    for data, status in ((rows_cut_short(buffer.getvalue()), 400), (buffer.getvalue(), 201)):
        response = admin_client.post(
            "/api/assets/upload",
            content_type="multipart/form-data",
            data={"file": (io.BytesIO(data), "cut.png"), "scope": "review"},
        )
        assert response.status_code == status, response.get_json()
    assert response.get_json()["width"] == 120

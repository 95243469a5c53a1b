"""POST /api/feedbacks/:id/attachments and the admin download (docs/api.md §9)."""

import gzip
import hashlib
import io
import re
from datetime import timedelta
from pathlib import Path

import pytest
from PIL import Image

from models import db
from models.feedback import FeedbackAttachment
from rules.ids import iso, utcnow
from tests.helpers.app import assert_error
from tests.helpers.feedback import (
    MINI,
    UNLIMITED,
    WEB,
    created,
    exif_block,
    image_bytes,
    png_with_text,
    set_fields,
    upload,
    zip_bytes,
)

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)

META_KEYS = {"id", "kind", "fileName", "contentType", "size", "sha256", "createdAt"}


def folder_of(app, feedback_id):
    return Path(app.config["REVIEW_UPLOADS_PATH"]) / "feedback" / feedback_id


def stored_files(app, feedback_id):
    """Every entry of the record's folder (temporary files included)."""
    folder = folder_of(app, feedback_id)
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_screenshot_is_stored_re_encoded_without_metadata(feedback_app, fb_client, fb_admin):
    record = created(fb_client)
    original = image_bytes("JPEG", size=(40, 20), exif=exif_block())
    assert b"SecretCameraMaker" in original
    response = upload(fb_client, record["id"], original, "C:\\Users\\me\\截图 1.jpg", "screenshot")
    assert response.status_code == 201
    meta = response.get_json()
    assert set(meta) == META_KEYS
    assert meta["kind"] == "screenshot" and meta["contentType"] == "image/jpeg"
    assert meta["fileName"] == "截图 1.jpg"
    files = stored_files(feedback_app, record["id"])
    assert files == [f"{meta['id']}.jpg"]  # generated name, not the client's
    stored = (folder_of(feedback_app, record["id"]) / files[0]).read_bytes()
    assert len(stored) == meta["size"] and hashlib.sha256(stored).hexdigest() == meta["sha256"]
    assert b"SecretCameraMaker" not in stored and b"Exif" not in stored
    with Image.open(io.BytesIO(stored)) as image:
        assert image.format == "JPEG"
        assert image.size == (20, 40)  # the EXIF orientation was applied before it was dropped
        assert dict(image.getexif()) == {}
    download = fb_admin.get(f"/api/feedbacks/{record['id']}/attachments/{meta['id']}")
    assert download.status_code == 200 and download.data == stored
    assert download.headers["Content-Type"] == "image/jpeg"
    assert download.headers["X-Content-Type-Options"] == "nosniff"
    assert download.headers["Content-Disposition"].startswith("attachment")


@pytest.mark.parametrize(
    ("data", "fmt", "content_type", "secret"),
    [
        (png_with_text(), "PNG", "image/png", b"secret-author-name"),
        (image_bytes("WEBP", exif=exif_block()), "WEBP", "image/webp", b"SecretCameraMaker"),
        (image_bytes("PNG", mode="P"), "PNG", "image/png", None),
    ],
)
def test_png_and_webp_lose_their_metadata(feedback_app, fb_client, data, fmt, content_type, secret):
    record = created(fb_client)
    if secret:
        assert secret in data
    meta = upload(fb_client, record["id"], data, "shot", "screenshot").get_json()
    assert meta["contentType"] == content_type
    stored = (folder_of(feedback_app, record["id"]) / stored_files(feedback_app, record["id"])[0]).read_bytes()
    if secret:
        assert secret not in stored
    with Image.open(io.BytesIO(stored)) as image:
        assert image.format == fmt
        image.load()
        assert not image.text if fmt == "PNG" else "exif" not in image.info


@pytest.mark.parametrize(
    ("data", "name", "reason"),
    [
        (image_bytes("GIF"), "a.gif", "not a PNG, JPEG or WebP image"),
        (b"not an image at all", "a.png", "not a PNG, JPEG or WebP image"),
        (image_bytes("PNG")[:60], "cut.png", "truncated or damaged image"),
        (b"", "empty.png", "empty file"),
    ],
)
def test_bad_screenshots_are_400(fb_client, data, name, reason):
    record = created(fb_client)
    error = assert_error(upload(fb_client, record["id"], data, name, "screenshot"), 400, "validation_error")
    assert error["details"]["file"] == [reason]


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_decompression_bomb_is_refused(feedback_app, fb_client):
    buffer = io.BytesIO()
    Image.new("1", (8000, 6000)).save(buffer, "PNG")  # 48 megapixels in a few kilobytes
    assert len(buffer.getvalue()) < 100_000
    record = created(fb_client)
    error = assert_error(
        upload(fb_client, record["id"], buffer.getvalue(), "bomb.png", "screenshot"), 400, "validation_error"
    )
    assert "pixels" in error["message"]
    assert stored_files(feedback_app, record["id"]) == []


def test_size_limits_are_413(fb_client):
    record = created(fb_client)
    too_big_image = b"\x89PNG" + b"\0" * (10 * 1024 * 1024)
    assert_error(upload(fb_client, record["id"], too_big_image, "big.png", "screenshot"), 413, "payload_too_large")
    too_big_log = b"a" * (20 * 1024 * 1024 + 1)
    assert_error(upload(fb_client, record["id"], too_big_log, "big.log", "log_file"), 413, "payload_too_large")
    huge = b"a" * (21 * 1024 * 1024)  # over the request cap: refused before the body is parsed
    error = assert_error(upload(fb_client, record["id"], huge, "huge.log", "log_file"), 413, "payload_too_large")
    assert f"at most {20 * 1024 * 1024 + 64 * 1024} bytes" in error["message"]
    assert upload(fb_client, record["id"], b"a" * (20 * 1024 * 1024), "max.log", "log_file").status_code == 201


@pytest.mark.parametrize(
    ("data", "name", "content_type"),
    [
        ("启动失败\nline 2\n".encode(), "app.log", "text/plain; charset=utf-8"),
        (b"plain text", "notes.TXT", "text/plain; charset=utf-8"),
        (zip_bytes(), "logs.zip", "application/zip"),
        (gzip.compress(b"log line\n"), "app.log.gz", "application/gzip"),
    ],
    ids=["log", "txt", "zip", "gz"],
)  # fixed ids: the archives carry the time they were made, and every worker collects
def test_log_files_accepted_by_extension_and_content(feedback_app, fb_client, fb_admin, data, name, content_type):
    record = created(fb_client)
    meta = upload(fb_client, record["id"], data, name, "log_file").get_json()
    assert meta["contentType"] == content_type and meta["size"] == len(data) and meta["fileName"] == name
    download = fb_admin.get(f"/api/feedbacks/{record['id']}/attachments/{meta['id']}")
    assert download.data == data  # logs are stored unchanged
    assert download.headers["Content-Type"] == content_type


@pytest.mark.parametrize(
    ("data", "name", "reason"),
    [
        (b"MZ\x90\x00binary", "tool.exe", "extension must be .log, .txt, .zip or .gz"),
        (b"no extension", "README", "extension must be .log, .txt, .zip or .gz"),
        (b"\xff\xfe\x00t\x00e", "app.log", "not UTF-8 text"),
        (b"text\x00with nul", "app.txt", "contains NUL bytes"),
        (b"PK but not a zip", "logs.zip", "not a ZIP archive"),
        (b"plain text", "app.gz", "not gzip data"),
    ],
)
def test_bad_log_files_are_400(fb_client, data, name, reason):
    record = created(fb_client)
    error = assert_error(upload(fb_client, record["id"], data, name, "log_file"), 400, "validation_error")
    assert error["details"]["file"] == [reason]


def test_form_is_checked(fb_client):
    record = created(fb_client)
    url = f"/api/feedbacks/{record['id']}/attachments"
    error = assert_error(upload(fb_client, record["id"], b"x", "a.log", "video"), 400, "validation_error")
    assert "kind" in error["details"]
    error = assert_error(fb_client.post(url, data={"kind": "log_file"}, headers=WEB), 400, "validation_error")
    assert error["details"] == {"file": ["missing"]}
    error = assert_error(upload(fb_client, record["id"], b"x", "a.log", "log_file", note="hi"), 400, "validation_error")
    assert "note" in error["details"]
    two = {"kind": "log_file", "file": [(io.BytesIO(b"a"), "a.log"), (io.BytesIO(b"b"), "b.log")]}
    error = assert_error(fb_client.post(url, data=two, headers=WEB), 400, "validation_error")
    assert error["details"] == {"file": ["more than one file"]}
    other = {"kind": "log_file", "file": (io.BytesIO(b"a"), "a.log"), "extra": (io.BytesIO(b"b"), "b.log")}
    error = assert_error(fb_client.post(url, data=other, headers=WEB), 400, "validation_error")
    assert error["details"] == {"extra": ["unknown field"]}
    assert FeedbackAttachment.select().count() == 0


@pytest.mark.parametrize(
    ("name", "shown"),
    [("a.exe", "a.png"), ("shot.PNG", "shot.PNG"), ("noext", "noext.png"), ("C:\\tmp\\x.jpg", "x.png")],
)
def test_a_screenshot_is_named_for_the_format_it_is_stored_in(fb_client, fb_admin, name, shown):
    record = created(fb_client)
    meta = upload(fb_client, record["id"], image_bytes("PNG"), name, "screenshot").get_json()
    assert meta["fileName"] == shown and meta["contentType"] == "image/png"
    download = fb_admin.get(f"/api/feedbacks/{record['id']}/attachments/{meta['id']}")
    assert f"filename={shown}" in download.headers["Content-Disposition"]


def test_who_may_upload(fb_client):
    record = created(fb_client)
    data = b"log"
    assert_error(upload(fb_client, record["id"], data, "a.log", "log_file", headers={}), 401, "unauthorized")
    assert_error(upload(fb_client, "no-such-id", data, "a.log", "log_file", headers={}), 401, "unauthorized")
    assert_error(upload(fb_client, "no-such-id", data, "a.log", "log_file"), 404, "not_found")
    # The anonymous channel may not upload at all, even to a record that exists.
    error = assert_error(upload(fb_client, record["id"], data, "a.log", "log_file", headers=MINI), 403, "forbidden")
    assert "anonymous" in error["message"]


def test_only_the_creating_channel_may_upload(make_app):
    app = make_app(FEEDBACK_CLIENT_TOKENS="web=client-web-token,ios=client-ios-token", **UNLIMITED)
    client = app.test_client()
    record = created(client)
    ios = {"x-feedback-client-token": "client-ios-token"}
    error = assert_error(upload(client, record["id"], b"log", "a.log", "log_file", headers=ios), 403, "forbidden")
    assert "channel" in error["message"]
    assert upload(client, record["id"], b"log", "a.log", "log_file").status_code == 201


def test_at_most_ten_attachments(feedback_app, fb_client):
    record = created(fb_client)
    for n in range(10):
        assert upload(fb_client, record["id"], f"log {n}".encode(), f"{n}.log", "log_file").status_code == 201
    error = assert_error(upload(fb_client, record["id"], b"eleventh", "11.log", "log_file"), 409, "attachment_limit")
    assert error["details"] == {"limit": 10}
    assert len(stored_files(feedback_app, record["id"])) == 10


def test_uploads_close_seven_days_after_creation(feedback_app, fb_client):
    record = created(fb_client)
    set_fields(record["id"], created_at=iso(utcnow() - timedelta(days=6, hours=23)))
    assert upload(fb_client, record["id"], b"day six", "a.log", "log_file").status_code == 201
    set_fields(record["id"], created_at=iso(utcnow() - timedelta(days=7, minutes=1)))
    error = assert_error(upload(fb_client, record["id"], b"day eight", "b.log", "log_file"), 409, "invalid_state")
    assert "7 days" in error["message"]
    assert len(stored_files(feedback_app, record["id"])) == 1


def test_detail_lists_attachments_in_creation_order_and_download_checks_the_pair(fb_client, fb_admin):
    record, other = created(fb_client), created(fb_client)
    ids = [upload(fb_client, record["id"], f"{n}".encode(), f"{n}.log", "log_file").get_json()["id"] for n in range(3)]
    with db.connection_context():  # the same millisecond must not reorder them either
        FeedbackAttachment.update(created_at="2026-01-01T00:00:00.000Z").execute()
    detail = fb_admin.get(f"/api/feedbacks/{record['id']}").get_json()
    assert [a["id"] for a in detail["attachments"]] == ids
    assert_error(fb_admin.get(f"/api/feedbacks/{other['id']}/attachments/{ids[0]}"), 404, "not_found")
    assert_error(fb_client.get(f"/api/feedbacks/{record['id']}/attachments/{ids[0]}", headers=WEB), 401, "unauthorized")
    response = fb_admin.get(f"/api/feedbacks/{record['id']}/attachments/{ids[1]}")
    assert response.data == b"1"
    assert re.search(r'filename="?1\.log', response.headers["Content-Disposition"])


def test_missing_file_on_disk_is_404_not_500(feedback_app, fb_client, fb_admin):
    record = created(fb_client)
    meta = upload(fb_client, record["id"], b"x", "a.log", "log_file").get_json()
    (folder_of(feedback_app, record["id"]) / f"{meta['id']}.log").unlink()
    error = assert_error(fb_admin.get(f"/api/feedbacks/{record['id']}/attachments/{meta['id']}"), 404, "not_found")
    assert "missing" in error["message"]


def test_an_attachment_file_replaced_by_a_link_out_of_the_folder_is_not_served(feedback_app, fb_client, fb_admin):
    import os

    record = created(fb_client)
    meta = upload(fb_client, record["id"], image_bytes(), "s.png", "screenshot").get_json()
    stored = folder_of(feedback_app, record["id"]) / stored_files(feedback_app, record["id"])[0]
    stored.unlink()
    os.symlink(Path(feedback_app.instance_path) / "secret_key", stored)
    download = fb_admin.get(f"/api/feedbacks/{record['id']}/attachments/{meta['id']}")
    assert download.status_code == 404 and feedback_app.secret_key.encode() not in download.data


def test_a_screenshot_whose_rows_are_cut_short_is_refused(fb_client):
    from tests.helpers.assets import rows_cut_short

    record = created(fb_client)
    response = upload(fb_client, record["id"], rows_cut_short(image_bytes(size=(60, 40))), "s.png", "screenshot")
    assert_error(response, 400, "validation_error")
    assert response.get_json()["error"]["details"] == {"file": ["truncated or damaged image"]}

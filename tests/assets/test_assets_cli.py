"""`flask --app app assets import` and `assets sync` (docs/api.md §6)."""

from pathlib import Path

import pytest

from models import Asset, db
from services import assets
from services.assets import asset_view
from tests.helpers.assets import ID_NAME, bomb_png, image_bytes


def library_rows():
    with db.connection_context():
        return list(Asset.select().where(Asset.scope == "library").order_by(Asset.id))


def lines_starting(output, word):
    return [line for line in output.splitlines() if line.startswith(word)]


# ---- import -------------------------------------------------------------------------------------
def test_import_a_folder_reports_each_file(app, runner, tmp_path):
    source = tmp_path / "source"
    (source / "sub" / ".cache").mkdir(parents=True)
    (source / "a.png").write_bytes(image_bytes("PNG"))
    (source / "b.jpg").write_bytes(image_bytes("JPEG"))
    (source / "sub" / "c.webp").write_bytes(image_bytes("WEBP", color=(0, 90, 0)))
    (source / "sub" / "copy-of-a.png").write_bytes(image_bytes("PNG"))
    (source / "sub" / ".hidden.png").write_bytes(image_bytes("PNG", color=(1, 1, 1)))
    (source / "sub" / ".cache" / "d.png").write_bytes(image_bytes("PNG", color=(2, 2, 2)))
    (source / "fake.png").write_text("<html><body>not an image</body></html>")
    (source / "notes.txt").write_text("hello")
    (source / "bomb.png").write_bytes(bomb_png(20000, 20000))
    (source / "huge.png").write_bytes(image_bytes("PNG") + b"\0" * assets.MAX_UPLOAD_BYTES)

    result = runner.invoke(args=["assets", "import", str(source)])

    assert result.exit_code == 1, result.output
    added = lines_starting(result.output, "added")
    assert [line.split()[1] for line in added] == [str(source / n) for n in ("a.png", "b.jpg", "sub/c.webp")]
    assert [line.split()[1] for line in lines_starting(result.output, "exists")] == [str(source / "sub/copy-of-a.png")]
    refused = {line.split()[1].rstrip(":"): line for line in lines_starting(result.output, "refused")}
    assert sorted(refused) == sorted(str(source / n) for n in ("bomb.png", "fake.png", "huge.png", "notes.txt"))
    assert "not a PNG, JPEG, GIF or WebP image" in refused[str(source / "fake.png")]
    assert "pixels" in refused[str(source / "bomb.png")]
    assert "larger than 10 MiB" in refused[str(source / "huge.png")]
    assert result.output.splitlines()[-1] == "3 added, 1 already in the library, 4 refused"

    rows = library_rows()
    assert [(r.file_name, r.content_type) for r in rows] == [
        ("a.png", "image/png"),
        ("b.jpg", "image/jpeg"),
        ("c.webp", "image/png"),
    ]
    stored = sorted(p.name for p in (Path(app.config["REVIEW_UPLOADS_PATH"]) / "library").iterdir())
    assert stored == sorted(r.stored_name for r in rows)
    assert all(ID_NAME.match(name) for name in stored)
    assert all(r.asset_id in line for r, line in zip(rows, added, strict=True))


def test_import_single_files_again_and_missing(runner, tmp_path):
    image = tmp_path / "logo.gif"
    image.write_bytes(image_bytes("GIF", mode="P", color=3))

    first = runner.invoke(args=["assets", "import", str(image)])
    assert first.exit_code == 0, first.output
    assert first.output.splitlines()[-1] == "1 added, 0 already in the library, 0 refused"
    second = runner.invoke(args=["assets", "import", str(image), str(tmp_path / "missing.png")])
    assert second.exit_code == 1
    assert lines_starting(second.output, "exists")[0].split()[1] == str(image)
    assert lines_starting(second.output, "refused") == [f"refused {tmp_path / 'missing.png'}: no such file"]
    assert [r.file_name for r in library_rows()] == ["logo.gif"]


def test_import_needs_a_path(runner):
    result = runner.invoke(args=["assets", "import"])
    assert result.exit_code == 2 and "Missing argument" in result.output


@pytest.fixture
def imported(runner, tmp_path):
    image = tmp_path / "shared.png"
    image.write_bytes(image_bytes("PNG", color=(5, 6, 7)))
    assert runner.invoke(args=["assets", "import", str(image)]).exit_code == 0
    return library_rows()[0]


def test_imported_images_are_listed_and_served(imported, client, agent_headers):
    listing = client.get("/api/assets", headers=agent_headers).get_json()
    assert [a["assetId"] for a in listing["items"]] == [imported.asset_id]
    served = client.get(imported.url, headers=agent_headers)
    assert served.status_code == 200 and served.data == image_bytes("PNG", color=(5, 6, 7))


# ---- sync ---------------------------------------------------------------------------------------
APPID, SECRET = "wx-silicon-rise-test", "silicon-rise-secret"


@pytest.fixture
def platform():
    from fakeplatform import FakePlatform

    fake = FakePlatform({APPID: SECRET})
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def sync_runner(make_app, platform):
    app = make_app(
        WECHAT_API_BASE=platform.base_url,
        WECHAT_SILICON_RISE_APPID=APPID,
        WECHAT_SILICON_RISE_SECRET=SECRET,
        REVIEW_REMOTE_IMAGE_HOSTS="127.0.0.1",
        REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE=True,
    )  # the images live on the fake, as the fake prints
    return app.test_cli_runner()


def remote_rows():
    with db.connection_context():
        return {r.platform_media_id: r for r in Asset.select().where(Asset.platform_media_id.is_null(False))}


def test_sync_reads_every_page_and_keeps_remote_assets(sync_runner, platform):
    seeded = [platform.seed_image_material(f"material-{n:02d}.png", image_bytes(color=(n, 0, 0))) for n in range(23)]
    seeded.append(platform.seed_image_material("photo.jpg", image_bytes("JPEG")))

    result = sync_runner.invoke(args=["assets", "sync", "silicon-rise"])

    assert result.exit_code == 0, result.output
    assert result.output.strip() == "silicon-rise: 24 added, 0 updated, 0 unchanged"
    pages = platform.requests_to("material/batchget_material")
    assert [(r["json"]["offset"], r["json"]["type"]) for r in pages] == [(0, "image"), (20, "image")]
    rows = remote_rows()
    assert set(rows) == {m["media_id"] for m in seeded}
    for material in seeded:
        row = rows[material["media_id"]]
        assert (row.scope, row.url, row.stored_name, row.file_name, row.platform_account) == (
            "library",
            material["url"],
            None,
            material["name"],
            "silicon-rise",
        )
    assert rows[seeded[-1]["media_id"]].content_type == "image/jpeg"
    assert asset_view(rows[seeded[0]["media_id"]])["platformMediaId"] == seeded[0]["media_id"]


def test_resync_updates_instead_of_duplicating(sync_runner, platform):
    first = platform.seed_image_material("old-name.png", image_bytes())
    assert sync_runner.invoke(args=["assets", "sync", "silicon-rise"]).exit_code == 0
    asset_id = remote_rows()[first["media_id"]].asset_id
    platform.materials[first["media_id"]]["name"] = "new-name.png"
    platform.seed_image_material("second.png", image_bytes(color=(0, 0, 9)))

    result = sync_runner.invoke(args=["assets", "sync", "silicon-rise"])

    assert result.output.strip() == "silicon-rise: 1 added, 1 updated, 0 unchanged"
    rows = remote_rows()
    assert len(rows) == 2 and rows[first["media_id"]].asset_id == asset_id
    assert rows[first["media_id"]].file_name == "new-name.png"
    again = sync_runner.invoke(args=["assets", "sync", "silicon-rise"])
    assert again.output.strip() == "silicon-rise: 0 added, 0 updated, 2 unchanged"


def test_synced_material_is_a_cached_upload_for_publishing(sync_runner, platform):
    from services.platform.uploads import cached_upload

    material = platform.seed_image_material("cover.png", image_bytes())
    assert sync_runner.invoke(args=["assets", "sync", "silicon-rise"]).exit_code == 0
    asset = remote_rows()[material["media_id"]]
    with db.connection_context():
        cached = cached_upload(asset.asset_id, "silicon-rise", "material")
        assert (cached.media_id, cached.url) == (material["media_id"], material["url"])
        assert cached_upload(asset.asset_id, "carbon-fitness", "material") is None


def test_sync_failures_are_reported(sync_runner, platform):
    for n in range(25):
        platform.seed_image_material(f"m{n}.png", image_bytes(color=(0, n, 0)))
    platform.fail_next("material/batchget_material", errcode=45009, errmsg="reach max api daily quota limit")
    result = sync_runner.invoke(args=["assets", "sync", "silicon-rise"])
    assert result.exit_code == 1
    assert "platform error 45009" in result.output and "0 added" in result.output
    assert remote_rows() == {}


def test_sync_without_credentials_or_with_an_unknown_account(runner):
    result = runner.invoke(args=["assets", "sync", "carbon-fitness"])
    assert result.exit_code == 1 and "carbon-fitness has no platform credentials configured" in result.output
    unknown = runner.invoke(args=["assets", "sync", "moon-base"])
    assert unknown.exit_code == 2 and "moon-base" in unknown.output


def test_synced_images_are_measured_so_they_can_be_article_covers(sync_runner, platform, admin_client, agent_headers):
    """A synced image had no size, so an approval refused it as a cover ("not a decodable image")."""
    from tests.helpers.review import approve_article, article_payload, create_task, decision_url

    material = platform.seed_image_material("wide.png", image_bytes(size=(900, 500)))
    assert sync_runner.invoke(args=["assets", "sync", "silicon-rise"]).exit_code == 0
    row = remote_rows()[material["media_id"]]
    assert (row.width, row.height) == (900, 500)

    task = create_task(admin_client, agent_headers, article_payload([row.url]))
    approved = admin_client.post(decision_url(task), json=approve_article(task, asset_view(row)))
    assert approved.status_code == 200, approved.get_data(as_text=True)
    assert approved.get_json()["selections"]["coverImage"] == {"assetId": row.asset_id}


def test_a_sync_that_cannot_read_image_sizes_says_so(make_app, platform):
    app = make_app(
        WECHAT_API_BASE=platform.base_url, WECHAT_SILICON_RISE_APPID=APPID, WECHAT_SILICON_RISE_SECRET=SECRET
    )  # the fake's host is not an allowed image host
    platform.seed_image_material("wide.png", image_bytes(size=(900, 500)))

    result = app.test_cli_runner().invoke(args=["assets", "sync", "silicon-rise"])

    assert result.exit_code == 0
    assert "1 added, 0 updated, 0 unchanged, 1 whose size could not be read" in result.output
    assert [(r.width, r.height) for r in remote_rows().values()] == [(None, None)]

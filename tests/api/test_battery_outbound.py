"""Security battery, outbound fetches and file cleanup (issue 9, item 2).

SSRF: a remote image is fetched by the package export (and by publishing) only from a host in
REVIEW_REMOTE_IMAGE_HOSTS whose every address is public. Each case below puts the tricky host in
the allow list on purpose, so only the address rules stand between the request and the target;
a listening target on 127.0.0.1 must receive nothing, and unroutable private addresses must be
refused without a connection attempt (well under the 5 s connect timeout). Redirects are checked
on every hop.

Path tricks: image references spelled with `..`, encoded dots, absolute paths or through a symlink
never make task deletion touch anything outside uploads/review/.
"""

import time
from pathlib import Path

import pytest

from fakeplatform import FakePlatform
from models import ReviewTask, db
from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.export import (
    ImageServer,
    download,
    image_bytes,
    make_task,
    remote_asset,
    stored_path,
    temp_entries,
    upload,
)


@pytest.fixture
def target():
    server = ImageServer()
    server.add("a.png", image_bytes())
    yield server
    server.stop()


def signed_in(app):
    create_admin()
    client = app.test_client()
    login(client)
    return client


def _port(server):
    return server.base.rsplit(":", 1)[1]


# (url template, the host put into the allow list)
SSRF_CASES = {
    "loopback": ("http://127.0.0.1:{port}/img/a.png", "127.0.0.1"),
    "loopback by name": ("http://localhost:{port}/img/a.png", "localhost"),
    "loopback, short form": ("http://127.1:{port}/img/a.png", "127.1"),
    "loopback, decimal": ("http://2130706433:{port}/img/a.png", "2130706433"),
    "loopback, hex": ("http://0x7f000001:{port}/img/a.png", "0x7f000001"),
    "unspecified (reaches loopback on Linux)": ("http://0.0.0.0:{port}/img/a.png", "0.0.0.0"),
    "ipv6 loopback": ("http://[::1]:{port}/img/a.png", "::1"),
    "ipv4-mapped loopback": ("http://[::ffff:127.0.0.1]:{port}/img/a.png", "::ffff:127.0.0.1"),
    "private 10/8": ("http://10.20.30.40/img/a.png", "10.20.30.40"),
    "private 172.16/12": ("http://172.16.5.5/img/a.png", "172.16.5.5"),
    "private 192.168/16": ("http://192.168.1.1/img/a.png", "192.168.1.1"),
    "carrier-grade nat": ("http://100.64.1.1/img/a.png", "100.64.1.1"),
    "link-local metadata": ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
    "ipv6 link-local": ("http://[fe80::1]/img/a.png", "fe80::1"),
    "ipv6 unique local": ("http://[fd00::1]/img/a.png", "fd00::1"),
    "outside the allow list": ("http://127.0.0.1:{port}/img/a.png", "mmbiz.qpic.cn"),
    "userinfo trick": ("http://mmbiz.qpic.cn@127.0.0.1:{port}/img/a.png", "mmbiz.qpic.cn"),
    "suffix trick": ("http://mmbiz.qpic.cn.127.0.0.1.nip.io:{port}/img/a.png", "mmbiz.qpic.cn"),
    "not http": ("file:///etc/passwd", "mmbiz.qpic.cn"),
}


@pytest.mark.parametrize("case", list(SSRF_CASES))
def test_package_export_refuses_ssrf_targets(make_app, target, case):
    template, allowed = SSRF_CASES[case]
    app = make_app(REVIEW_REMOTE_IMAGE_HOSTS=f"{allowed},mmbiz.qpic.cn")
    admin = signed_in(app)
    url = template.format(port=_port(target))
    selections = [{"coverImage": {"assetId": remote_asset(url)["assetId"]}}]  # a synced material
    if url.startswith("http"):  # an image link that is no asset (other schemes are left as written)
        selections.append({"body": f"![外链]({url})"})
    for selection in selections:
        task_id = make_task(selections={"title": "T", **selection})
        started = time.perf_counter()
        response = download(admin, task_id)
        seconds = time.perf_counter() - started
        assert_error(response, 409, "export_failed")
        assert seconds < 2, f"{seconds:.1f} s: a connection was attempted"
    assert target.hits == []
    assert temp_entries(app) == []


@pytest.mark.parametrize(
    "location",
    [
        "http://localhost:{port}/img/a.png",
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.2:{port}/img/a.png",
        "file:///etc/passwd",
        "http://[::1]:{port}/img/a.png",
    ],
)
def test_package_export_checks_every_redirect_hop(make_app, target, location):
    """The first hop is allowed (127.0.0.1, private addresses allowed for the test); the redirect is not."""
    app = make_app(REVIEW_REMOTE_IMAGE_HOSTS="127.0.0.1", REVIEW_REMOTE_IMAGE_ALLOW_PRIVATE=True)
    admin = signed_in(app)
    second = ImageServer()
    try:
        second.add("a.png", image_bytes())
        hop = location.format(port=_port(second))
        asset = remote_asset(f"{target.base}/redirect?to={hop}")
        task_id = make_task(selections={"title": "T", "coverImage": {"assetId": asset["assetId"]}})
        assert_error(download(admin, task_id), 409, "export_failed")
        assert second.hits == []
        assert [hit.split("?")[0] for hit in target.hits] == ["/redirect"]
    finally:
        second.stop()


def test_publishing_refuses_a_remote_image_on_a_loopback_address(make_app, target):
    platform = FakePlatform({"wx-carbon": "secret-carbon-123"})
    platform.start()
    try:
        app = make_app(
            REVIEW_REMOTE_IMAGE_HOSTS="127.0.0.1",
            WECHAT_API_BASE=platform.base_url,
            WECHAT_CARBON_FITNESS_APPID="wx-carbon",
            WECHAT_CARBON_FITNESS_SECRET="secret-carbon-123",
            WECHAT_TIMEOUT_SECONDS=2,
        )
        admin = signed_in(app)
        image = remote_asset(f"{target.base}/img/a.png")  # synced from silicon-rise: carbon-fitness must fetch it
        selections = {
            "title": "晨练",
            "description": "操场",
            "images": [{"assetId": image["assetId"]}],
            "coverCrop": {
                "assetId": image["assetId"],
                "cropPercentList": [{"ratio": "3_4", "x1": 0, "y1": 0, "x2": 1, "y2": 1}],
            },
            "commentSettings": {"needOpenComment": True, "onlyFansCanComment": False},
        }
        task_id = make_task("image_post", status="approved", selections=selections, candidates={"titles": ["晨练"]})
        with db.connection_context():
            ReviewTask.update(public_account="carbon-fitness").where(ReviewTask.task_id == task_id).execute()
        response = admin.post(f"/api/review/tasks/{task_id}/publish-jobs")
    finally:
        platform.stop()
    assert response.status_code == 200, response.get_data(as_text=True)
    job = response.get_json()["publishJobs"][-1]
    assert job["status"] == "failed"
    assert target.hits == []


# ---- path tricks in references never leave uploads/review -----------------------------------------
def test_delete_never_touches_files_outside_uploads_review(make_app, tmp_path):
    app = make_app()
    admin = signed_in(app)
    uploads = Path(app.config["REVIEW_UPLOADS_PATH"])
    own = upload(admin, image_bytes(color=(1, 2, 3)))
    library = upload(admin, image_bytes(color=(4, 5, 6)), scope="library")
    library_file = stored_path(app, library)
    precious = tmp_path / "precious.png"
    precious.write_bytes(image_bytes(color=(7, 8, 9)))
    link = uploads / "review" / "linked.png"  # a plain name in review/ whose target is elsewhere
    link.symlink_to(precious)
    secret = Path(app.config["REVIEW_INSTANCE_PATH"]) / "secret_key"
    lib = library_file.name
    tricks = [
        f"/uploads/review/../library/{lib}",
        f"/uploads/review/%2e%2e/library/{lib}",
        f"/uploads/review/..%2flibrary%2f{lib}",
        f"/uploads/review/./../library/{lib}",
        "/uploads/review/../../instance/secret_key",
        "/uploads/review/linked.png",
        str(precious),
        str(library_file),
        f"file://{precious}",
        f"/uploads/review//{precious}",
    ]
    body = "\n\n".join(f"![x]({ref})" for ref in tricks)
    task_id = make_task(
        candidates={"titles": ["T"], "coverImages": tricks},
        selections={
            "title": "T",
            "coverImage": own["url"],
            "body": body,
            "bodyImages": tricks[:3] + [{"assetId": library["assetId"]}],
        },
    )
    response = admin.delete(f"/api/review/tasks/{task_id}")
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()["deletedFileCount"] == 1
    assert not stored_path(app, own).exists()
    assert library_file.is_file() and precious.is_file() and secret.is_file()
    assert link.is_symlink()

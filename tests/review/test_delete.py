"""Task deletion (docs/api.md §8): record first, then best-effort cleanup of unshared review files."""

import io
import os
from contextlib import contextmanager
from pathlib import Path

import pytest

from models import Asset, AssetCleanup, IdempotencyKey, OutboxMessage, PublishJob, ReviewTask, TimelineEvent, db
from rules.ids import new_id, now_iso
from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.export import (
    download,
    image_bytes,
    link_outside,
    make_task,
    open_zip,
    remote_asset,
    stored_path,
    upload,
)
from tests.helpers.review import approve_article, article_payload, create_task, decision_url

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def delete(client, task_id, **headers):
    return client.delete(f"/api/review/tasks/{task_id}", headers=headers)


def exists(task_id):
    with db.connection_context():
        return ReviewTask.select().where(ReviewTask.task_id == task_id).exists()


def asset_exists(asset):
    with db.connection_context():
        return Asset.select().where(Asset.asset_id == asset["assetId"]).exists()


def review_upload(admin, shade):
    return upload(admin, image_bytes(size=(90, 50), color=(shade, 40, 40)))


def add_belongings(task_id, snapshot=None):
    """A publish job (with a snapshot), a pending and a sent notification, an idempotency record."""
    with db.connection_context():
        task = ReviewTask.get(ReviewTask.task_id == task_id)
        PublishJob.create(
            job_id=new_id(),
            task=task,
            status="failed",
            trigger_mode="manual",
            queued_at=now_iso(),
            snapshot=snapshot or {},
        )
        for status in ("pending", "sent"):
            OutboxMessage.create(
                message_id=new_id(),
                task_id=task_id,
                event_type="review_task.rejected",
                payload={},
                status=status,
                next_attempt_at=now_iso(),
                created_at=now_iso(),
            )
        IdempotencyKey.create(
            key=f"key-{task_id}", body_hash="h", status=201, response={"id": task_id}, created_at=now_iso()
        )
        IdempotencyKey.create(
            key=f"other-{task_id}", body_hash="h", status=201, response={"id": "x" + task_id}, created_at=now_iso()
        )


def test_delete_counts_each_reference_once_and_keeps_what_others_use(app, admin_client):
    cover, inline, candidate_only, shared, linked_only, snapshot_only = (
        review_upload(admin_client, shade) for shade in (1, 2, 3, 4, 5, 6)
    )
    library = upload(admin_client, image_bytes(color=(9, 9, 9)), scope="library")
    remote = remote_asset("https://mmbiz.qpic.cn/mmbiz_png/abc/0?wx_fmt=png")
    external = "https://example.com/outside.png"
    body = (
        f"![a]({inline['url']}) ![lib]({library['url']}) ![ext]({external}) ![again]({inline['url']})\n\n"
        f"A plain [link]({linked_only['url']}) is not an image.\n"
    )
    task_id = make_task(
        candidates={
            "coverImages": [cover["url"], candidate_only["url"], external],
            "bodyOptions": [{"id": "b1", "outline": "o", "focuses": [], "content": body}],
        },
        selections={
            "title": "T",
            "body": body,
            "coverImage": {"assetId": cover["assetId"]},
            "bodyImages": [inline["url"], {"assetId": shared["assetId"]}, {"assetId": remote["assetId"]}],
        },
        manual_overrides={"coverImage": {"basedOn": cover["url"], "value": {"assetId": cover["assetId"]}}},
        body_draft={
            "markdown": body,
            "sourceBodyCandidateId": "b1",
            "sourceBodyCandidate": body,
            "bodyEditedFromCandidate": False,
        },
    )
    add_belongings(task_id, snapshot={"coverImage": snapshot_only["url"]})
    other_id = make_task(selections={"title": "Other", "bodyImages": [shared["url"]]})
    files = {
        name: stored_path(app, asset)
        for name, asset in (
            ("cover", cover),
            ("inline", inline),
            ("candidate_only", candidate_only),
            ("shared", shared),
            ("linked_only", linked_only),
            ("snapshot_only", snapshot_only),
            ("library", library),
        )
    }

    response = delete(admin_client, task_id)
    assert response.status_code == 200
    # deleted: cover, inline, candidate_only; skipped: library, remote, external URL, shared.
    assert response.get_json() == {
        "deletedTaskId": task_id,
        "deletedFileCount": 3,
        "skippedAssetCount": 4,
        "redirectTo": "/review",
    }
    for name in ("cover", "inline", "candidate_only"):
        assert not files[name].exists(), name
    for name in ("shared", "linked_only", "snapshot_only", "library"):
        assert files[name].is_file(), name
    assert [asset_exists(a) for a in (cover, inline, candidate_only)] == [False] * 3
    assert [asset_exists(a) for a in (shared, library, remote, linked_only)] == [True] * 4

    with db.connection_context():
        assert not ReviewTask.select().where(ReviewTask.task_id == task_id).exists()
        assert PublishJob.select().count() == 0 and TimelineEvent.select().count() == 1  # the other task's
        assert [m.status for m in OutboxMessage.select()] == ["sent"]  # only unsent ones are discarded
        assert [k.key for k in IdempotencyKey.select()] == [f"other-{task_id}"]
    assert exists(other_id)

    # The shared upload goes with the last task that used it.
    assert delete(admin_client, other_id).get_json()["deletedFileCount"] == 1
    assert not files["shared"].exists() and not asset_exists(shared)


def test_a_plain_link_in_another_task_does_not_keep_the_file(app, admin_client):
    """Only image references count (docs/api.md §8): another task linking the file's URL as a plain
    hyperlink, or naming it in its topic, does not keep it."""
    asset = review_upload(admin_client, 11)
    task_id = make_task(selections={"title": "T", "coverImage": {"assetId": asset["assetId"]}})
    body = f"See [the original]({asset['url']}) and not ![an image](https://example.com/x.png)."
    other_id = make_task(
        topic=f"about {asset['url']}",
        selections={"title": "Other", "body": body},
        candidates={"bodyOptions": [{"id": "b", "outline": "o", "focuses": [], "content": body}]},
    )

    assert delete(admin_client, task_id).get_json()["deletedFileCount"] == 1
    assert not stored_path(app, asset).exists() and not asset_exists(asset)
    assert exists(other_id)


def test_a_failed_file_deletion_still_removes_the_record(app, admin_client):
    asset = review_upload(admin_client, 10)
    path = stored_path(app, asset)
    path.unlink()
    path.mkdir()  # a directory where the file was: unlink fails
    task_id = make_task(selections={"coverImage": asset["url"]})
    body = delete(admin_client, task_id).get_json()
    assert (body["deletedFileCount"], body["skippedAssetCount"]) == (0, 1)
    assert not exists(task_id)
    assert path.is_dir() and asset_exists(asset)  # the asset row stays while its path is occupied


def test_an_already_missing_file_only_loses_its_row(app, admin_client):
    asset = review_upload(admin_client, 11)
    stored_path(app, asset).unlink()
    task_id = make_task(selections={"coverImage": asset["url"]})
    body = delete(admin_client, task_id).get_json()
    assert (body["deletedFileCount"], body["skippedAssetCount"]) == (1, 0)
    assert not asset_exists(asset)


def test_a_failed_commit_puts_the_file_back_with_its_row(app, admin_client, monkeypatch):
    """The disk fills up as the asset's deletion commits: the task is gone, the asset stays whole."""
    import peewee

    from services import task_delete

    asset = review_upload(admin_client, 12)
    task_id = make_task(selections={"coverImage": asset["url"]})
    real, calls = task_delete.immediate, []

    @contextmanager
    def commit_fails_for_the_asset():
        calls.append(1)
        with real():
            yield
            if len(calls) == 2:  # the first transaction deletes the task, the second the asset
                raise peewee.OperationalError("database or disk is full")

    monkeypatch.setattr(task_delete, "immediate", commit_fails_for_the_asset)
    response = delete(admin_client, task_id)
    assert response.status_code == 200
    assert (response.get_json()["deletedFileCount"], response.get_json()["skippedAssetCount"]) == (0, 1)
    assert not exists(task_id) and asset_exists(asset)
    served = admin_client.get(asset["url"])
    assert served.status_code == 200 and served.data == stored_path(app, asset).read_bytes()
    assert [p.name for p in stored_path(app, asset).parent.iterdir() if p.name.startswith(".")] == []


def test_a_deletion_cut_short_is_settled_at_the_next_start(make_app, tmp_path):
    """A stop between setting a file aside and the commit (row still there) restores it; a stop after the
    commit (row gone) removes it."""
    from services.files import TOMBSTONE

    app = make_app()
    create_admin()
    admin = app.test_client()
    login(admin)
    kept, gone = review_upload(admin, 13), review_upload(admin, 14)
    for asset in (kept, gone):
        path = stored_path(app, asset)
        path.rename(path.with_name(TOMBSTONE + path.name))
    with db.connection_context():
        Asset.delete().where(Asset.asset_id == gone["assetId"]).execute()
    app = make_app()  # the next start
    assert stored_path(app, kept).is_file() and asset_exists(kept)
    assert not stored_path(app, gone).exists()
    assert [p.name for p in stored_path(app, kept).parent.iterdir() if p.name.startswith(".")] == []


def test_a_deletion_stopped_before_its_files_is_finished_at_the_next_start(make_app, monkeypatch):
    """The task's row was gone but a stop (kill -9) came before its files: they stayed for good, and
    nothing could remove them any more. A file another task uses still stays."""
    from services import task_delete

    app = make_app()
    create_admin()
    admin = app.test_client()
    login(admin)
    own, shared = review_upload(admin, 15), review_upload(admin, 16)
    task_id = make_task(selections={"coverImage": own["url"], "bodyImages": [shared["url"]]})
    make_task(selections={"coverImage": shared["url"]})

    class Stopped(BaseException):
        pass

    def stop(*_args):
        raise Stopped

    monkeypatch.setattr(task_delete, "_remove_asset", stop)  # the process ends right after step 1
    with pytest.raises(Stopped), db.connection_context():
        task_delete.delete_task(task_id, app.extensions["settings"])
    monkeypatch.undo()
    assert not exists(task_id) and asset_exists(own) and stored_path(app, own).is_file()

    app = make_app()  # the next start
    assert not asset_exists(own) and not stored_path(app, own).exists()
    assert asset_exists(shared) and stored_path(app, shared).is_file()
    with db.connection_context():
        assert AssetCleanup.select().count() == 0


def test_a_cleanup_entry_that_cannot_be_cleared_does_not_fail_the_committed_delete(
    app, admin_client, tmp_path, monkeypatch
):
    """A kept asset (its stored file a symlink) clears its journal entry on its own; a database error
    there turned a deletion that had already committed into a 500."""
    import peewee

    from services import task_delete

    asset = review_upload(admin_client, 17)
    link_outside(app, asset, tmp_path / "elsewhere.png")
    task_id = make_task(selections={"coverImage": asset["url"]})

    def locked(_asset_id):
        raise peewee.OperationalError("database is locked")

    monkeypatch.setattr(task_delete, "_forget_cleanup", locked)
    response = delete(admin_client, task_id)
    assert response.status_code == 200 and response.get_json()["skippedAssetCount"] == 1
    assert not exists(task_id) and asset_exists(asset)
    with db.connection_context():  # left for the next serving start
        assert [e.asset_id for e in AssetCleanup.select()] == [asset["assetId"]]


def test_a_symlink_in_review_never_deletes_its_target(app, admin_client, tmp_path):
    asset = review_upload(admin_client, 12)
    outside = tmp_path / "precious.png"
    path = link_outside(app, asset, outside)
    task_id = make_task(selections={"coverImage": asset["url"]})
    body = delete(admin_client, task_id).get_json()
    assert (body["deletedFileCount"], body["skippedAssetCount"]) == (0, 1)
    assert outside.read_bytes()[:4] == b"\x89PNG"
    assert path.is_symlink() and asset_exists(asset)  # skipped: the link is left for whoever made it


@pytest.mark.parametrize("stored_name", ["../library/{lib}", "{abs}", "sub/../../library/{lib}"])
def test_a_path_trick_in_the_asset_record_never_leaves_uploads_review(app, admin_client, stored_name):
    library = upload(admin_client, image_bytes(color=(8, 8, 8)), scope="library")
    library_file = stored_path(app, library)
    name = stored_name.format(lib=library_file.name, abs=str(library_file))
    with db.connection_context():
        crafted = Asset.create(
            asset_id=new_id(),
            scope="review",
            url=f"/uploads/review/{new_id()}.png",
            stored_name=name,
            created_at=now_iso(),
        )
    task_id = make_task(selections={"coverImage": {"assetId": crafted.asset_id}})
    body = delete(admin_client, task_id).get_json()
    assert (body["deletedFileCount"], body["skippedAssetCount"]) == (0, 1)
    assert library_file.is_file() and asset_exists(library)


def test_a_symlinked_review_folder_entry_pointing_outside_is_not_followed(app, admin_client, tmp_path):
    """Even a file whose real path is elsewhere through a link is skipped (realpath check)."""
    asset = review_upload(admin_client, 13)
    path = stored_path(app, asset)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.replace(path, elsewhere / path.name)
    (Path(app.config["REVIEW_UPLOADS_PATH"]) / "review" / "sub").symlink_to(elsewhere)
    with db.connection_context():
        Asset.update(stored_name=f"sub/{path.name}").where(Asset.asset_id == asset["assetId"]).execute()
    task_id = make_task(selections={"coverImage": {"assetId": asset["assetId"]}})
    assert delete(admin_client, task_id).get_json()["skippedAssetCount"] == 1
    assert (elsewhere / path.name).is_file()


# ---- credentials and If-Match -----------------------------------------------------------------
def test_delete_needs_the_review_permission_and_honours_if_match(app, client, agent_headers):
    create_admin()
    create_admin("fb", permissions="feedback")
    task_id = make_task()
    assert_error(delete(client, task_id, **agent_headers), 401, "unauthorized")
    feedback_only = app.test_client()
    login(feedback_only, "fb")
    assert_error(delete(feedback_only, task_id), 403, "forbidden")
    admin = app.test_client()
    login(admin)
    assert_error(delete(admin, task_id, Origin="https://elsewhere.example"), 403, "forbidden")
    assert_error(delete(admin, "no-such-task"), 404, "not_found")
    assert_error(delete(admin, task_id, **{"If-Match": '"7"'}), 412, "precondition_failed")
    assert exists(task_id)
    response = delete(admin, task_id, **{"If-Match": '"1"'})
    assert response.status_code == 200 and response.get_json()["deletedTaskId"] == task_id
    assert not exists(task_id)
    assert_error(delete(admin, task_id), 404, "not_found")


def test_end_to_end_through_the_review_routes(app, admin_client, client, agent_headers):
    """Created by the agent, approved, downloaded, then deleted with the ETag it was read with."""
    cover = upload(admin_client, image_bytes(size=(90, 50), color=(77, 1, 1)))
    task = create_task(client, agent_headers, article_payload([cover["url"]]))
    approved = admin_client.post(decision_url(task), json=approve_article(task, cover))
    assert approved.status_code == 200, approved.get_data(as_text=True)
    archive = open_zip(download(admin_client, task["id"]))
    assert archive.namelist() == ["manuscript.md", "images/", f"images/cover-{cover['assetId']}.png"]
    assert "芯片的未来在哪里" in archive.read("manuscript.md").decode()

    etag = admin_client.get(f"/api/review/tasks/{task['id']}").headers["ETag"]
    response = delete(admin_client, task["id"], **{"If-Match": etag})
    assert response.get_json() == {
        "deletedTaskId": task["id"],
        "deletedFileCount": 1,
        "skippedAssetCount": 0,
        "redirectTo": "/review",
    }
    assert_error(admin_client.get(f"/api/review/tasks/{task['id']}"), 404, "not_found")
    assert not stored_path(app, cover).exists()


def _upload_again(client, data, headers=None):
    return client.post(
        "/api/assets/upload",
        data={"file": (io.BytesIO(data), "again.png"), "scope": "review"},
        content_type="multipart/form-data",
        headers=headers or {},
    )


def test_an_asset_handed_out_again_to_an_upload_outlives_its_tasks_deletion(app, admin_client, client, agent_headers):
    """The agent uploaded bytes a task already used and was answered 200 with that asset; deleting the old
    task removed it, so the agent's next task naming it was refused."""
    data = image_bytes(size=(900, 500), color=(79, 1, 2))
    first = upload(admin_client, data)
    old = make_task(selections={"coverImage": first["url"]})
    again = _upload_again(client, data, agent_headers)
    assert (again.status_code, again.get_json()["assetId"]) == (200, first["assetId"])
    deleted = delete(admin_client, old)
    assert (deleted.get_json()["deletedFileCount"], deleted.get_json()["skippedAssetCount"]) == (0, 1)
    assert asset_exists(first) and stored_path(app, first).is_file()
    created = client.post("/api/review/agent/tasks", json=article_payload([first["url"]]), headers=agent_headers)
    assert created.status_code == 201, created.get_json()


def _while_set_aside(monkeypatch, other):
    """The deletion's file is set aside (its row not gone yet) when `other` starts; it waits for the deletion (its
    folder's removal lock), so the join's half second only lets it get there."""
    from services import task_delete

    real = task_delete.removed_file

    @contextmanager
    def removed_file(path):
        with real(path) as set_aside:

            def aside():
                moved = set_aside()
                other.start()
                other.join(0.5)
                return moved

            yield aside

    monkeypatch.setattr(task_delete, "removed_file", removed_file)


def test_an_upload_of_the_same_bytes_during_a_deletion_leaves_no_file_without_a_row(app, admin_client, monkeypatch):
    """The deletion had set the file aside, its row not yet gone: the same bytes uploaded then saw the file
    missing and wrote it again, and the deletion's commit left that file with no row (no journal finds it)."""
    import threading

    from services import assets

    data = image_bytes(size=(90, 50), color=(78, 1, 2))
    first = upload(admin_client, data)
    task_id = make_task(selections={"coverImage": first["url"]})
    answered = []

    def same_bytes():
        with db.connection_context():
            asset, created = assets.save_upload(
                data, scope="review", file_name="y.png", uploads_root=app.config["REVIEW_UPLOADS_PATH"]
            )
            answered.append((asset.asset_id, created))

    other = threading.Thread(target=same_bytes)
    _while_set_aside(monkeypatch, other)
    assert delete(admin_client, task_id).get_json()["deletedFileCount"] == 1
    other.join(30)
    [(asset_id, created)] = answered
    assert created and asset_id != first["assetId"]  # the old row was gone: the bytes stored anew
    folder = stored_path(app, first).parent
    with db.connection_context():
        rows = {a.stored_name for a in Asset.select()}
    assert {p.name for p in folder.iterdir() if not p.name.startswith(".")} == rows


def test_a_full_disk_while_a_missing_file_is_written_again_is_storage_unavailable(app, admin_client, monkeypatch):
    import errno

    from services import files

    data = image_bytes(color=(4, 4, 4))
    first = upload(admin_client, data)
    stored_path(app, first).unlink()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    answer = _upload_again(admin_client, data)
    assert_error(answer, 500, "storage_unavailable")
    assert [p.name for p in stored_path(app, first).parent.iterdir()] == []


def test_a_start_during_anothers_deletion_leaves_no_file_without_a_row(app, admin_client, monkeypatch):
    """A second process starting (its recovery of stopped deletions) while a deletion had set its file aside,
    row not yet gone: the start took the tombstone for a stop's, found the row and put the file back; the
    deletion then committed, leaving a file no row names."""
    import threading

    from services import task_delete

    asset = review_upload(admin_client, 70)
    task_id = make_task(selections={"coverImage": asset["url"]})

    def start():  # another serving process's start, its first step of recover_deletions
        with db.connection_context():
            task_delete.recover_deletions(app.config["REVIEW_UPLOADS_PATH"])

    starting = threading.Thread(target=start)
    _while_set_aside(monkeypatch, starting)
    assert delete(admin_client, task_id).get_json()["deletedFileCount"] == 1
    starting.join(30)
    assert not asset_exists(asset) and not stored_path(app, asset).exists()
    assert [p.name for p in stored_path(app, asset).parent.iterdir()] == []

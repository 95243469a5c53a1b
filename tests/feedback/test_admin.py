"""Admin routes: list filters, paging and counts, detail, status changes, CSV export (docs/api.md §9)."""

import csv
import io

import pytest

from models import AdminUser, db
from models.feedback import index_pending
from schemas.common import MAX_PAGE
from services.errors import Unauthorized
from services.feedback import queries, triage
from tests.helpers.app import assert_error, create_admin, login
from tests.helpers.feedback import MINI, created, payload, set_fields, submit, upload

pytestmark = pytest.mark.both_stores  # every test runs on SQLite and on PostgreSQL (tests/conftest.py)


def listing(admin, **params):
    response = admin.get("/api/feedbacks", query_string=params)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def numbers(page):
    return [item["feedbackNo"] for item in page["items"]]


@pytest.fixture(params=["queued", "partly indexed", "indexed"])
def sample(request, fb_client):
    """Five records with distinct filter values, oldest first, on known days; two attachments on #1.

    Each test runs with the records still queued for the search indexes (matched with LIKE), with
    some moved into the indexes, and with all of them indexed: the answers must not differ."""
    rows = [
        created(
            fb_client,
            type="bug",
            title="Crash on launch",
            content="闪退了，打开就退出",
            appName="reader",
            appVersion="1.0.0",
            platform="ios",
            userId="alice-01",
            contactEmail="alice@example.com",
        ),
        created(
            fb_client,
            type="suggestion",
            title="夜间模式",
            content="希望增加夜间模式",
            appName="reader",
            appVersion="1.1.0",
            platform="android",
            contactWechat="wx_bob",
        ),
        created(
            fb_client,
            type="content",
            title="错别字",
            content="第三段有错别字 typo",
            appName="fitness",
            appVersion="1.0.0",
            platform="ios",
        ),
        created(
            fb_client,
            type="account",
            title="无法登录",
            content="login fails with 500",
            appName="fitness",
            appVersion="2.0.0",
            platform="web",
            userId="carol",
        ),
        created(
            fb_client,
            type="other",
            title="100% 满意",
            content="a_b literal underscore",
            appName="reader",
            appVersion="1.0.0",
            platform="web",
        ),
    ]
    for n in range(2):  # before the records move into the past (uploads close after 7 days)
        assert upload(fb_client, rows[1]["id"], b"x", f"{n}.log", "log_file").status_code == 201
    days = [
        "2026-01-10T08:00:00.000Z",
        "2026-01-11T23:59:59.999Z",
        "2026-01-12T00:00:00.000Z",
        "2026-01-13T12:00:00.000Z",
        "2026-01-14T12:00:00.000Z",
    ]
    for row, day in zip(rows, days, strict=True):
        set_fields(row["id"], created_at=day)
        row["createdAt"] = day
    with db.connection_context():
        index_pending({"queued": 0, "partly indexed": 3, "indexed": len(rows)}[request.param])
    return rows


def test_admin_routes_need_a_session_with_the_feedback_permission(feedback_app, fb_client, sample):
    record_id = sample[0]["id"]
    routes = [
        ("get", "/api/feedbacks"),
        ("get", "/api/feedbacks/export.csv"),
        ("get", f"/api/feedbacks/{record_id}"),
        ("patch", f"/api/feedbacks/{record_id}/status"),
        ("get", "/api/feedbacks/nope/attachments/nope"),
    ]
    for method, url in routes:
        assert_error(getattr(fb_client, method)(url, json={"status": "processed"}), 401, "unauthorized")
        assert_error(
            getattr(fb_client, method)(
                url, headers={"x-feedback-client-token": "client-web-token"}, json={"status": "processed"}
            ),
            401,
            "unauthorized",
        )
    create_admin("reviewer", permissions="review")
    reviewer = feedback_app.test_client()
    login(reviewer, "reviewer")
    for method, url in routes:
        assert_error(getattr(reviewer, method)(url, json={"status": "processed"}), 403, "forbidden")


def test_list_shape_newest_first_with_attachment_counts(fb_admin, sample):
    page = listing(fb_admin)
    assert numbers(page) == [r["feedbackNo"] for r in reversed(sample)]
    item = page["items"][3]
    assert item["attachmentCount"] == 2 and "attachments" not in item
    assert item["title"] == "夜间模式" and item["contactWechat"] == "wx_bob" and item["status"] == "unprocessed"
    assert page["items"][0]["attachmentCount"] == 0
    assert page["pagination"] == {"page": 1, "pageSize": 20, "total": 5, "totalPages": 1}
    assert page["counts"] == {"all": 5, "unprocessed": 5, "processing": 0, "processed": 0}


# (query, the sample records it finds, newest first)
FILTERS = [
    ({"type": "suggestion"}, [1]),
    ({"appName": "fitness"}, [3, 2]),
    ({"platform": "web"}, [4, 3]),
    ({"appVersion": "1.0.0"}, [4, 2, 0]),
    ({"appName": "reader", "appVersion": "1.0.0", "platform": "ios"}, [0]),
    ({"keyword": "夜间模式"}, [1]),  # 3+ characters: trigram index
    ({"keyword": "闪退"}, [0]),  # 2 Chinese characters: character index
    ({"keyword": "退"}, [0]),
    ({"keyword": "LOGIN"}, [3]),  # case-insensitive
    ({"keyword": "ogi"}, [3]),  # inside a word
    ({"keyword": "alice@exa"}, [0]),  # contactEmail
    ({"keyword": "wx_b"}, [1]),  # contactWechat
    ({"keyword": "carol"}, [3]),  # userId
    ({"keyword": "%"}, [4]),  # wildcards are literal
    ({"keyword": "a_b"}, [4]),
    ({"keyword": "nowhere to be found"}, []),
    ({"keyword": "typo", "platform": "web"}, []),
    ({"from": "2026-01-11", "to": "2026-01-12"}, [2, 1]),  # a date-only `to` covers that day
    ({"from": "2026-01-12T00:00:00Z"}, [4, 3, 2]),
    ({"to": "2026-01-11T23:59:59.999Z"}, [1, 0]),  # a date-time `to` is inclusive
    ({"from": "2026-01-13", "to": "2026-01-13"}, [3]),
    ({"status": "all", "type": "", "keyword": " "}, [4, 3, 2, 1, 0]),  # empty parameters: no filter
]


def test_list_filters(fb_admin, sample):
    wrong = []  # every query tried on the one sample, each named where it fails
    for params, expected in FILTERS:
        page = listing(fb_admin, **params)
        found, wanted = (
            (numbers(page), page["pagination"]["total"]),
            ([sample[i]["feedbackNo"] for i in expected], len(expected)),
        )
        if found != wanted:
            wrong.append((params, found, wanted))
    assert wrong == []


def test_keyword_finds_the_feedback_number(fb_admin, sample):
    number = sample[2]["feedbackNo"]
    assert numbers(listing(fb_admin, keyword=number.lower())) == [number]
    assert numbers(listing(fb_admin, keyword=number[-7:])) == [number]


def test_short_latin_keywords_use_like(fb_admin, sample):
    # 'ty' (2 ASCII characters) is below the trigram length and not CJK: the LIKE fallback.
    assert numbers(listing(fb_admin, keyword="ty")) == [sample[2]["feedbackNo"]]


@pytest.fixture(params=["queued", "partly indexed", "indexed"])
def look_alikes(request, fb_client):
    """Records a loose keyword match would also find, in the three indexing states of `sample`
    (partly: the two oldest indexed)."""
    rows = [
        created(fb_client, title=f"问题 {n}", content=content, platform=platform)
        for n, (content, platform) in enumerate(
            [("闪 退问题", "ios"), ("真的闪退", "ios"), ("Été chaud", "web"), ("闪，退", "ios"), ("Ab闪退x", "ios")]
        )
    ]
    with db.connection_context():
        index_pending({"queued": 0, "partly indexed": 2, "indexed": len(rows)}[request.param])
    return rows


LOOK_ALIKE_QUERIES = [
    # The character index holds "闪 退" and "闪，退" as 闪退 (it drops spaces and punctuation).
    ({"keyword": "闪退"}, [4, 1]),
    ({"keyword": "闪退", "platform": "ios"}, [4, 1]),
    ({"keyword": "退"}, [4, 3, 1, 0]),
    ({"keyword": "été"}, [2]),  # case folded beyond ASCII, queued or indexed
    ({"keyword": "ÉTÉ CHAUD"}, [2]),
    ({"keyword": "Ét"}, [2]),  # 2 Latin characters: LIKE, which folds ASCII case only ('ét' misses)
]


def test_keyword_results_do_not_depend_on_indexing(fb_admin, look_alikes):
    wrong = []
    for params, expected in LOOK_ALIKE_QUERIES:
        page = listing(fb_admin, **params)
        exported = read_csv(fb_admin.get("/api/feedbacks/export.csv", query_string=params))
        wanted = [look_alikes[i]["feedbackNo"] for i in expected]
        found = (numbers(page), page["pagination"]["total"], [row["feedbackNo"] for row in exported])
        if found != (wanted, len(expected), wanted):
            wrong.append((params, found, wanted))
    assert wrong == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"status": "done"}, "status"),
        ({"page": "0"}, "page"),
        ({"page": "x"}, "page"),
        ({"pageSize": "0"}, "pageSize"),
        ({"pageSize": "101"}, "pageSize"),
        ({"from": "yesterday"}, "from"),
        ({"from": "2026-01-12", "to": "2026-01-11"}, "to"),
        ({"keyword": "k" * 201}, "keyword"),
    ],
)
def test_bad_queries_are_400(fb_admin, params, field):
    error = assert_error(fb_admin.get("/api/feedbacks", query_string=params), 400, "validation_error")
    assert field in error["details"], error


def test_paging_and_whole_table_counts(fb_client, fb_admin):
    records = [created(fb_client, title=f"item {n:02d}") for n in range(23)]
    for record in records[:4]:
        fb_admin.patch(f"/api/feedbacks/{record['id']}/status", json={"status": "processed"})
    fb_admin.patch(f"/api/feedbacks/{records[4]['id']}/status", json={"status": "processing"})
    seen = []
    for page_number, size in ((1, 10), (2, 10), (3, 3)):
        page = listing(fb_admin, page=page_number, pageSize=10)
        assert page["pagination"] == {"page": page_number, "pageSize": 10, "total": 23, "totalPages": 3}
        assert len(page["items"]) == size
        seen += numbers(page)
    assert seen == [r["feedbackNo"] for r in reversed(records)]
    assert listing(fb_admin, page=4, pageSize=10)["items"] == []
    # Pages are bounded only by SQLite's 64-bit OFFSET; any page past the end is empty with the totals.
    for page_number in (1_000_001, MAX_PAGE):
        far = listing(fb_admin, page=page_number, pageSize=100)
        assert far["items"] == [] and far["pagination"]["total"] == 23
    assert_error(fb_admin.get("/api/feedbacks", query_string={"page": MAX_PAGE + 1}), 400, "validation_error")
    filtered = listing(fb_admin, status="processed", pageSize=100)
    assert filtered["pagination"]["total"] == 4 and len(filtered["items"]) == 4
    # Counts describe the whole table whatever the filter.
    for page in (filtered, listing(fb_admin, keyword="no match at all")):
        assert page["counts"] == {"all": 23, "unprocessed": 18, "processing": 1, "processed": 4}


def test_detail(fb_client, fb_admin, sample):
    response = fb_admin.get(f"/api/feedbacks/{sample[0]['id']}")
    assert response.status_code == 200
    detail = response.get_json()
    assert detail["attachments"] == [] and detail["userId"] == "alice-01"
    assert detail["createdAt"] == sample[0]["createdAt"]
    assert [a["fileName"] for a in fb_admin.get(f"/api/feedbacks/{sample[1]['id']}").get_json()["attachments"]] == [
        "0.log",
        "1.log",
    ]
    assert_error(fb_admin.get("/api/feedbacks/unknown-id"), 404, "not_found")


def test_status_semantics(fb_admin, sample):
    url = f"/api/feedbacks/{sample[0]['id']}/status"
    processed = fb_admin.patch(url, json={"status": "processed", "adminNote": "fixed in 1.0.1"}).get_json()
    assert processed["status"] == "processed" and processed["processedBy"] == "admin"
    assert processed["adminNote"] == "fixed in 1.0.1" and processed["processedAt"]
    assert processed["updatedAt"] >= processed["processedAt"]
    processing = fb_admin.patch(url, json={"status": "processing"}).get_json()
    assert processing["status"] == "processing" and processing["processedAt"] is None
    assert processing["processedBy"] == "admin" and processing["adminNote"] == "fixed in 1.0.1"  # kept
    noted = fb_admin.patch(url, json={"status": "processing", "adminNote": "reopened"}).get_json()
    assert noted["adminNote"] == "reopened"
    reopened = fb_admin.patch(url, json={"status": "unprocessed", "adminNote": None}).get_json()
    assert reopened["status"] == "unprocessed" and reopened["processedAt"] is None and reopened["adminNote"] is None
    stored = fb_admin.get(f"/api/feedbacks/{sample[0]['id']}").get_json()
    assert stored["status"] == "unprocessed" and stored["processedAt"] is None
    assert listing(fb_admin)["counts"] == {"all": 5, "unprocessed": 5, "processing": 0, "processed": 0}


def test_status_body_is_validated(fb_admin, sample):
    url = f"/api/feedbacks/{sample[0]['id']}/status"
    for body, field in (
        ({"status": "done"}, "status"),
        ({}, "status"),
        ({"status": "processed", "x": 1}, "x"),
        ({"status": "processed", "adminNote": 5}, "adminNote"),
    ):
        error = assert_error(fb_admin.patch(url, json=body), 400, "validation_error")
        assert field in error["details"]
    assert_error(fb_admin.patch("/api/feedbacks/unknown/status", json={"status": "processed"}), 404, "not_found")


def test_cross_origin_status_change_is_refused(fb_admin, sample):
    response = fb_admin.patch(
        f"/api/feedbacks/{sample[0]['id']}/status",
        json={"status": "processed"},
        headers={"Origin": "https://evil.example"},
    )
    assert_error(response, 403, "forbidden")


def test_processed_by_comes_from_a_revalidated_account(feedback_app, fb_admin, sample):
    with db.connection_context():
        with pytest.raises(Unauthorized):
            triage.set_status(sample[0]["id"], "processed", "ghost")
        AdminUser.update(permissions="review").where(AdminUser.username == "admin").execute()
        with pytest.raises(Unauthorized):
            triage.set_status(sample[0]["id"], "processed", "admin")
        AdminUser.update(permissions="review,feedback", active=False).where(AdminUser.username == "admin").execute()
    response = fb_admin.patch(f"/api/feedbacks/{sample[0]['id']}/status", json={"status": "processed"})
    assert_error(response, 401, "unauthorized")
    with db.connection_context():
        assert queries.get_feedback(sample[0]["id"])["status"] == "unprocessed"


def read_csv(response):
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="feedback-')
    assert response.data.startswith(b"\xef\xbb\xbf")
    return list(csv.DictReader(io.StringIO(response.data.decode("utf-8-sig"))))


def test_csv_export_with_filters(fb_admin, sample):
    rows = read_csv(fb_admin.get("/api/feedbacks/export.csv"))
    assert [r["feedbackNo"] for r in rows] == [s["feedbackNo"] for s in reversed(sample)]
    bob = rows[3]
    assert bob["title"] == "夜间模式" and bob["content"] == "希望增加夜间模式" and bob["contactWechat"] == "wx_bob"
    assert bob["attachmentCount"] == "2" and bob["status"] == "unprocessed" and bob["userId"] == ""
    assert bob["createdAt"] == sample[1]["createdAt"] and bob["id"] == sample[1]["id"]
    filtered = read_csv(
        fb_admin.get("/api/feedbacks/export.csv", query_string={"appName": "fitness", "keyword": "login"})
    )
    assert [r["feedbackNo"] for r in filtered] == [sample[3]["feedbackNo"]]
    assert_error(fb_admin.get("/api/feedbacks/export.csv", query_string={"status": "bad"}), 400, "validation_error")


def test_csv_keeps_formulas_as_text_and_every_page(fb_client, fb_admin):
    created(fb_client, title='=HYPERLINK("http://evil")', content="+1 -1 @cmd", extra={"k": "值"})
    many = [created(fb_client, title=f"row {n}") for n in range(3)]
    rows = read_csv(fb_admin.get("/api/feedbacks/export.csv"))
    assert len(rows) == 4
    assert rows[-1]["title"] == '\'=HYPERLINK("http://evil")' and rows[-1]["content"] == "'+1 -1 @cmd"
    assert rows[-1]["extra"] == '{"k":"值"}'
    with db.connection_context():  # batches of 2: keyset paging joins them without gaps or repeats
        batched = [item["feedbackNo"] for item in queries.iter_feedbacks({"status": "all"}, batch=2)]
    assert batched == [r["feedbackNo"] for r in rows]
    assert batched[:3] == [r["feedbackNo"] for r in reversed(many)]


def test_anonymous_channel_records_are_listed_like_others(fb_client, fb_admin):
    submit(fb_client, payload(title="from the mini program"), headers=MINI)
    item = listing(fb_admin, keyword="mini program")["items"][0]
    assert item["channel"] == "miniprogram" and item["userId"] is None


def test_openapi_documents_every_feedback_route(fb_client):
    paths = fb_client.get("/api/openapi.json").get_json()["paths"]
    expected = {
        "/api/feedbacks": {"get", "post"},
        "/api/feedbacks/export.csv": {"get"},
        "/api/feedbacks/{feedback_id}": {"get"},
        "/api/feedbacks/{feedback_id}/status": {"patch"},
        "/api/feedbacks/{feedback_id}/attachments": {"post"},
        "/api/feedbacks/{feedback_id}/attachments/{attachment_id}": {"get"},
    }
    for path, methods in expected.items():
        assert set(paths[path]) >= methods, path
    create = paths["/api/feedbacks"]["post"]
    assert create["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/FeedbackCreate")
    assert create["security"] == [{"clientToken": []}]
    assert "multipart/form-data" in paths["/api/feedbacks/{feedback_id}/attachments"]["post"]["requestBody"]["content"]

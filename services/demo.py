"""Sample data for `python app.py --demo` and the browser tests, made through the same service functions (and
schemas) as the API, so the samples obey every rule a real agent or client meets. Call inside
`db.connection_context()`.
"""

import functools
import io
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from models.assets import Asset
from models.editions import Edition
from models.live import TaskLive
from models.review import ReviewTask
from models.writes import immediate
from rules.ids import iso, parse_iso, utcnow
from schemas.feedback import FeedbackCreateSchema
from schemas.review import CreateTaskSchema, DecisionSchema
from services import assets as asset_service
from services import editions, review
from services.assets import asset_view
from services.comments import actions, fetching, reading
from services.comments.articles import article_of
from services.feedback import attachments, intake, queries, triage
from services.live import go_live
from services.publishing import approve_and_publish
from services.settings import Settings
from services.stats import fetch_day

PALETTE = {"silicon-rise": ((20, 60, 140), (90, 170, 255)), "carbon-fitness": ((20, 110, 60), (240, 180, 40))}
DEMO_CHANNEL = "demo-app"


@functools.lru_cache(maxsize=64)  # the tests seed many times in one process
def make_png(width: int, height: int, label: str, colors: tuple = ((40, 70, 140), (120, 190, 250))) -> bytes:
    """A gradient PNG with a label and a grid, so crops and ordering are visible."""
    mask = Image.linear_gradient("L").resize((width, height))
    image = Image.composite(
        Image.new("RGB", (width, height), colors[1]), Image.new("RGB", (width, height), colors[0]), mask
    )
    draw = ImageDraw.Draw(image)
    step = max(width, height) // 8
    for x in range(0, width, step):
        draw.line([(x, 0), (x, height)], fill=(255, 255, 255), width=1)
    for y in range(0, height, step):
        draw.line([(0, y), (width, y)], fill=(255, 255, 255), width=1)
    font = ImageFont.load_default(size=max(18, min(width, height) // 20))
    left, top, right, bottom = draw.textbbox((28, 28), label, font=font)
    draw.rectangle([(16, 16), (right + 12, bottom + 12)], fill=(255, 255, 255))
    draw.text((28, 28), label, fill=(20, 20, 20), font=font)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


def _image(uploads_root, scope, name, size, label, account):
    png = make_png(*size, label, PALETTE[account])
    return asset_service.save_upload(png, scope=scope, file_name=name, uploads_root=uploads_root)[0]


def _body(option_id, outline, focuses, content):
    return {"id": option_id, "outline": outline, "focuses": focuses, "content": content}


def _article(account, topic, title_list, summaries, authors, bodies, covers, body_images=None):
    candidates = {
        "titles": title_list,
        "summaries": summaries,
        "authors": authors,
        "bodyOptions": bodies,
        "coverImages": [c.url for c in covers],
    }
    if body_images:
        candidates["bodyImageCandidates"] = body_images
    return {"publicAccount": account, "topic": topic, "contentType": "article", "candidates": candidates}


def _image_post(account, topic, title_list, descriptions, groups, comment_settings=None):
    candidates = {
        "titles": title_list,
        "descriptions": descriptions,
        "imageGroups": [
            {"id": gid, "label": label, "images": [{"assetId": a.asset_id} for a in group]}
            for gid, label, group in groups
        ],
    }
    if comment_settings:
        candidates["commentSettings"] = comment_settings
    return {"publicAccount": account, "topic": topic, "contentType": "image_post", "candidates": candidates}


def sample_tasks(uploads_root: str) -> list[dict[str, Any]]:
    """Payloads of POST /api/review/agent/tasks, with their images uploaded first."""

    def img(name, size, label, account, scope="review"):
        return _image(uploads_root, scope, name, size, label, account)

    si, cf = "silicon-rise", "carbon-fitness"
    chip_covers = [
        img("chip-cover-a.png", (900, 500), "chip cover A", si),
        img("chip-cover-b.png", (1000, 500), "chip cover B", si),
    ]
    chip_body = [img("wafer.png", (800, 450), "wafer", si), img("package.png", (800, 450), "package", si)]
    run_cover = img("run-cover.png", (900, 450), "winter run cover", cf)
    gym = [img(f"gym-{n}.png", (900, 1200), f"gym day {n}", cf) for n in range(1, 5)]
    expo = [img(f"expo-{n}.png", (1200, 900), f"expo photo {n}", si) for n in range(1, 4)]
    chip_text = (
        "## 背景\n\n摩尔定律放缓之后，芯片行业把目光投向了**先进封装**与新材料。\n\n"
        f"![晶圆]({chip_body[0].url})\n\n## 现状\n\n- 3D 堆叠\n- 芯粒（chiplet）\n- 硅光互连\n\n"
        "## 展望\n\n下一个十年，系统级创新比单纯缩小晶体管更重要。参考 [IEEE IRDS](https://irds.ieee.org/)。\n"
    )
    chip_alt = (
        "## 为什么要关心封装\n\n过去我们只看制程节点，如今封装决定了带宽、功耗与成本。\n\n"
        "> 封装是新的摩尔定律。\n\n## 三个趋势\n\n1. 芯粒标准化\n2. 混合键合\n3. 共封装光学\n"
    )
    run_text = (
        "# 冬季跑步指南\n\n气温低于 5℃ 时，热身时间要比平时多一倍。\n\n"
        "## 穿衣\n\n三层原则：排汗层、保暖层、防风层。\n\n"
        "## 配速\n\n前 10 分钟放慢 20 秒/公里，让身体慢慢进入状态。\n\n"
        "```\n热身 10 分钟 → 主课 30 分钟 → 拉伸 10 分钟\n```\n"
    )
    run_alt = (
        "# 冬天也能跑得舒服\n\n先说结论：**慢一点，穿对，补水**。\n\n## 常见误区\n\n- 冬天不用补水\n- 穿得越厚越好\n"
    )
    cool_text = "## 问题\n\n单卡功耗突破 1000 W。\n\n## 方案\n\n液冷板与浸没式冷却。\n"
    return [
        _article(
            si,
            "芯片的下一个十年",
            ["芯片的下一个十年", "摩尔定律之后：封装的黄金时代"],
            ["从制程到封装，一次看懂芯片行业的新方向。", "先进封装、芯粒与硅光：未来十年的三条主线。"],
            ["硅基编辑部", "林一"],
            [
                _body("chip-a", "背景|现状|展望", ["先进封装", "芯粒"], chip_text),
                _body("chip-b", "为什么要关心封装|三个趋势", ["混合键合", "共封装光学"], chip_alt),
            ],
            chip_covers,
            [{"placeholderId": "figure-1", "options": [chip_body[0].url, chip_body[1].url]}],
        ),
        _article(
            cf,
            "冬季跑步指南",
            ["冬季跑步指南", "冬天跑步，这 3 件事最重要", "零下也能跑：一份实用清单"],
            ["低温跑步的热身、穿衣和配速建议。"],
            ["碳能教练组"],
            [
                _body("run-a", "热身|穿衣|配速", ["热身", "三层穿衣"], run_text),
                _body("run-b", "结论|常见误区", ["补水"], run_alt),
            ],
            [run_cover],
        ),
        _image_post(
            cf,
            "一周力量训练打卡",
            ["一周力量训练打卡", "7 天力量训练计划"],
            ["每天 30 分钟，四个动作练全身。", "跟着做：深蹲、硬拉、卧推、划船。"],
            [("week-a", "训练日 1–4", gym), ("week-b", "精选两张", gym[:2])],
            [{"needOpenComment": False, "onlyFansCanComment": True}],
        ),
        _image_post(si, "展会现场速递", ["展会现场速递"], ["三张图看懂今年的半导体展。"], [("expo", "展会现场", expo)]),
        _article(
            si,
            "AI 芯片散热的新办法",
            ["AI 芯片散热的新办法"],
            ["液冷、浸没式与微流道。"],
            [],
            [_body("cool-a", "问题|方案", ["液冷"], cool_text)],
            [img("cooling-cover.png", (960, 540), "cooling cover", si)],
        ),
    ]


def extra_samples(uploads_root: str) -> list[dict[str, Any]]:
    """The demo's own further samples (`python app.py --demo`, not seed-demo): one article with one option
    per field, which its chat card decides in one tap, and the day's three edition articles."""
    si, cf = "silicon-rise", "carbon-fitness"
    long_text = "## 补水\n\n跑前两小时喝 500 毫升水。\n\n## 热身\n\n慢跑 10 分钟。\n"
    return [
        _article(
            cf,
            CHAT_TOPIC,
            [CHAT_TOPIC],
            ["补水、热身和一双合脚的鞋。"],
            ["碳能教练组"],
            [_body("long-a", "补水|热身|鞋", ["补水"], long_text)],
            [_image(uploads_root, "review", "long-run.png", (900, 500), "long run cover", cf)],
        ),
        *[
            _article(
                si,
                topic,
                [topic],
                [summary],
                ["硅基编辑部"],
                [_body(f"day-{n}", "要点", [topic], f"## 要点\n\n{summary}\n")],
                [_image(uploads_root, "review", f"day-{n}.png", (900, 500), f"edition article {n}", si)],
            )
            for n, (topic, summary) in enumerate(EDITION_SAMPLES, 1)
        ],
    ]


def library_images(uploads_root: str) -> list:
    """A few shared-library images for the library pickers."""
    sizes = [
        ("library-landscape.png", (1200, 600), "silicon-rise"),
        ("library-portrait.png", (900, 1200), "carbon-fitness"),
        ("library-square.png", (1000, 1000), "silicon-rise"),
        ("library-wide.png", (1000, 500), "carbon-fitness"),
    ]
    return [
        _image(uploads_root, "library", name, size, name.removesuffix(".png"), account) for name, size, account in sizes
    ]


SAMPLE_FEEDBACK = [
    {
        "type": "bug",
        "title": "发布后封面图模糊",
        "content": "在 iOS 上打开文章，封面明显被压缩，文字看不清。",
        "appName": "reader",
        "appVersion": "2.4.0",
        "platform": "ios",
        "deviceModel": "iPhone 15",
        "osVersion": "iOS 18.1",
        "userId": "u-1001",
        "contactEmail": "reader@example.com",
        "logText": "12:01:03 cover loaded 320x180\n12:01:04 upscale",
    },
    {
        "type": "suggestion",
        "title": "希望支持夜间模式",
        "content": "晚上看文章太亮了，希望可以切换深色主题。",
        "appName": "reader",
        "appVersion": "2.4.0",
        "platform": "android",
        "deviceModel": "Pixel 8",
    },
    {
        "type": "content",
        "title": "跑步文章里的配速写错了",
        "content": "冬季跑步指南里写的是每公里放慢 20 分钟，应该是 20 秒。",
        "appName": "reader",
        "appVersion": "2.3.1",
        "platform": "web",
        "pagePath": "/articles/winter-run",
    },
    {
        "type": "account",
        "title": "无法绑定微信",
        "content": "点击绑定后一直转圈。",
        "appName": "coach",
        "appVersion": "1.0.2",
        "platform": "android",
        "contactWechat": "runner_cf",
    },
]


def seed_feedback(settings: Settings, admin_username: str | None = None) -> list[dict[str, Any]]:
    uploads_root = settings.uploads_path
    created = [
        intake.create_feedback(FeedbackCreateSchema().load(payload), DEMO_CHANNEL, f"198.51.100.{index}", settings)
        for index, payload in enumerate(SAMPLE_FEEDBACK, 1)
    ]
    record = queries.get_record(created[0]["id"])
    for kind, name, content in (
        ("screenshot", "cover-blurry.png", make_png(390, 844, "screenshot: blurry cover")),
        ("log_file", "reader.log", b"12:01:03 cover loaded 320x180\n12:01:04 upscale to 1080\n"),
    ):
        attachments.add_attachment(record, DEMO_CHANNEL, kind, name, content, uploads_root)
    if admin_username:
        triage.set_status(created[2]["id"], "processed", admin_username, "已改正为 20 秒/公里")
        triage.set_status(created[1]["id"], "processing", admin_username, None)
    return created


def seed(settings: Settings, admin_username: str | None = None) -> dict[str, list]:
    """Create the sample data once (a database that already holds tasks is left alone): {"tasks": [task JSON],
    "feedback": [FeedbackDetail], "library": [asset dict]}."""
    if ReviewTask.select().exists():
        return {"tasks": [], "feedback": [], "library": []}
    uploads_root = settings.uploads_path
    library = [asset_view(asset) for asset in library_images(uploads_root)]
    # As the agent's would, the new tasks and feedback reach the team's channels (the demo's robot).
    tasks = [
        review.create_task(CreateTaskSchema().load(payload), team=settings.team)[1]
        for payload in sample_tasks(uploads_root)
    ]
    return {"tasks": tasks, "feedback": seed_feedback(settings, admin_username), "library": library}


# The day's edition the demo sends to followers (docs/api.md §21): three short articles, the first the headline.
EDITION_SAMPLES = (
    ("RISC-V 走进数据中心", "开放指令集从嵌入式走向服务器。"),
    ("边缘 AI 的三种落地方式", "摄像头、网关与手机：算力在离用户更近的地方。"),
    ("一张图看懂 HBM", "高带宽内存为何成了 AI 芯片的瓶颈。"),
)
LIVE_TOPIC = "AI 芯片散热的新办法"  # the sample the demo takes all the way to readers
CHAT_TOPIC = "周末长跑前的三件事"  # one option per field: its chat card decides it in one tap (docs/api.md §22)
LIVE_WAIT_SECONDS = 20.0


def _approve_and_publish(task: ReviewTask, admin_username: str, settings: Settings) -> None:
    candidates = task.candidates
    cover = Asset.get(Asset.url == candidates["coverImages"][0])
    decision = DecisionSchema().load(
        {
            "action": "approve_and_publish",
            "selections": {
                "title": candidates["titles"][0],
                "summary": candidates["summaries"][0],
                "body": candidates["bodyOptions"][0]["content"],
                "coverImage": {"assetId": cover.asset_id},
            },
        }
    )
    approve_and_publish(task.task_id, decision, admin_username, settings)


def seed_edition(settings: Settings, admin_username: str) -> dict[str, Any] | None:
    """The demo's further samples (extra_samples), then the day's edition of its three articles, proposed as
    the agent would and sent to the (fake) platform's followers by the running worker; None when it is not
    sent in time."""
    for payload in extra_samples(settings.uploads_path):
        review.create_task(CreateTaskSchema().load(payload), team=settings.team)
    topics = [topic for topic, _summary in EDITION_SAMPLES]
    tasks = sorted(ReviewTask.select().where(ReviewTask.topic.in_(topics)), key=lambda t: topics.index(t.topic))
    if len(tasks) != len(topics):
        return None
    for task in tasks:
        _approve_and_publish(task, admin_username, settings)
    proposed = editions.propose(tasks[0].public_account, [task.task_id for task in tasks], None, settings)
    editions.schedule(proposed["id"], None, None, False, admin_username, settings)
    deadline = time.monotonic() + LIVE_WAIT_SECONDS
    while (edition := editions.get_edition(proposed["id"]))["status"] not in ("sent", "failed"):
        if time.monotonic() > deadline:
            return None
        time.sleep(0.2)
    if edition["status"] != "sent":
        return None
    # The sample's story: yesterday's edition. Sent today it would spend the account's one send of the day
    # (docs/api.md §21, the quota counts by sendAt), and the tester could send nothing from /editions.
    with immediate():
        Edition.update(send_at=iso(parse_iso(edition["sendAt"]) - timedelta(days=1))).where(
            Edition.edition_id == edition["id"]
        ).execute()
    return editions.get_edition(proposed["id"])


def task_count() -> int:
    """The tasks the review list shows: the samples and the demo's further ones."""
    return ReviewTask.select().count()


def seed_live(
    settings: Settings,
    admin_username: str,
    published_on: Callable[[str, str], None] | None = None,
    days: int = 7,
) -> dict[str, Any] | None:
    """The demo's article already live on the (fake) platform with a week of reader figures, so its
    page shows the link and the chart at once (docs/api.md §18, §19). The running live worker submits it
    and learns the result; None when it does not go live in time. `published_on(msg_data_id, day)` tells
    the platform it was published that day too: datacube answers by publish day (§19)."""
    task = ReviewTask.get_or_none(ReviewTask.topic == LIVE_TOPIC)
    if task is None:
        return None
    _approve_and_publish(task, admin_username, settings)
    go_live(task.task_id, None, admin_username, settings)
    deadline = time.monotonic() + LIVE_WAIT_SECONDS
    while (live := TaskLive.get(TaskLive.task == task)).status != "live":
        if live.status == "failed" or time.monotonic() > deadline:
            return None
        time.sleep(0.2)
    # The sample's story: written and taken live a week ago, so its week of figures follows its going live
    # (figures are kept only from that day, docs/api.md §19).
    went_live = utcnow() - timedelta(days=days)
    with immediate():
        TaskLive.update(live_at=iso(went_live)).where(TaskLive.id == live.id).execute()
        ReviewTask.update(created_at=iso(went_live - timedelta(hours=3))).where(ReviewTask.id == task.id).execute()
    today = datetime.now(settings.time_zone).date()
    if published_on is not None and live.msg_data_id:
        published_on(live.msg_data_id, (today - timedelta(days=days)).isoformat())
    for back in range(days, 0, -1):
        fetch_day(live.account, (today - timedelta(days=back)).isoformat(), settings, force=True)
    return review.get_task(task.task_id)


# Readers' comments on the demo's live article (docs/api.md §23): (content, hours ago, featured, the account's
# reply). The last one waits with the agent's proposal (DEMO_PROPOSAL); the others show a featured comment
# and one answered in the back office.
DEMO_COMMENTS = (
    ("浸没式冷却的液体多久要换一次？成本能算清楚吗？", 150, True, None),
    ("我们机房刚上了液冷板，维护比想象中麻烦。", 120, False, "谢谢分享！下周我们会写一篇液冷运维的经验。"),
    ("1000 W 的单卡，普通机柜还撑得住吗？", 60, False, None),
    ("写得很清楚，转给团队了。", 30, False, None),
    ("液冷板和浸没式，哪个更适合中小机房？", 5, False, None),
)
DEMO_PROPOSAL = "中小机房通常先上液冷板：改造小、维护熟悉；机柜功率很高时再考虑浸没式。我们会在下一篇里比较两者的成本。"


def seed_comments(
    settings: Settings, live: dict[str, Any], add_comment: Callable[..., int] | None = None
) -> dict[str, Any]:
    """Readers' comments on the demo's live article: `add_comment(msg_data_id, index, content, create_time=,
    featured=, reply=)` puts them on the (fake) platform, the service fetches them as its job would, and the
    agent proposes a reply to the newest (never sent by itself). The task's comments answer."""
    task = ReviewTask.get(ReviewTask.task_id == live["id"])
    article = article_of(TaskLive.get(TaskLive.task == task))
    if article is None:
        return reading.task_comments(live["id"])
    if add_comment is not None:
        now = utcnow()
        for content, hours, featured, reply in DEMO_COMMENTS:
            created = int((now - timedelta(hours=hours)).timestamp())
            add_comment(
                article.msg_data_id, article.index, content, create_time=created, featured=featured, reply=reply
            )
    fetching.fetch(settings, article.account, force=True)
    waiting = reading.task_comments(live["id"])["comments"]
    newest = next((c for c in waiting if c["content"] == DEMO_COMMENTS[-1][0]), None)
    if newest is not None and not newest["proposals"]:
        actions.propose(live["id"], newest["id"], DEMO_PROPOSAL)
    return reading.task_comments(live["id"])

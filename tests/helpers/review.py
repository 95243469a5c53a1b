"""Reusable pieces for review tests: real image assets, valid payloads, decisions, a live server.

    cover = make_asset(app, 900, 500)                 # real PNG under uploads/review + Asset row
    task = create_task(client, agent_headers, article_payload())
    admin_client.post(decision_url(task), json=approve_article(task, cover))

`live_server(app)` runs the app on a real threaded HTTP server on 127.0.0.1 (for concurrency).
"""

import io
import itertools
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

from PIL import Image

from fakeplatform.threaded import Served
from models import Asset, db
from rules.ids import new_id, now_iso

_colors = itertools.count(1)


def png_bytes(width, height):
    """A real PNG whose bytes differ from every other one made here (assets are unique per sha256)."""
    n = next(_colors)
    image = Image.new("RGB", (width, height), ((n * 37) % 256, (n * 91) % 256, (n // 7) % 256))
    image.putpixel((0, 0), (n % 256, (n // 256) % 256, 1))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def make_asset(app, width=900, height=500, scope="review"):
    """Write a real PNG into uploads/<scope>/ and its Asset row; returns {"assetId", "url"}."""
    import hashlib

    data = png_bytes(width, height)
    asset_id = new_id()
    stored = f"{asset_id}.png"
    folder = Path(app.config["REVIEW_UPLOADS_PATH"]) / scope
    folder.mkdir(parents=True, exist_ok=True)
    (folder / stored).write_bytes(data)
    with db.connection_context():
        Asset.create(
            asset_id=asset_id,
            scope=scope,
            url=f"/uploads/{scope}/{stored}",
            stored_name=stored,
            file_name="image.png",
            content_type="image/png",
            width=width,
            height=height,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            created_at=now_iso(),
        )
    return {"assetId": asset_id, "url": f"/uploads/{scope}/{stored}"}


def body_option(option_id, content, outline="引言|正文|结语"):
    return {"id": option_id, "outline": outline, "focuses": ["重点一", "重点二"], "content": content}


def article_payload(cover_urls=(), **overrides):
    payload = {
        "publicAccount": "silicon-rise",
        "topic": "芯片的未来",
        "candidates": {
            "authors": ["硅基君"],
            "titles": ["芯片的未来在哪里", "三分钟看懂芯片"],
            "summaries": ["一篇关于芯片的短文"],
            "bodyOptions": [body_option("opt-a", "# 芯片\n\n正文 A"), body_option("opt-b", "# 芯片\n\n正文 B")],
            "coverImages": list(cover_urls),
        },
    }
    payload.update(overrides)
    return payload


def image_post_payload(images, **overrides):
    """`images`: assets from make_asset (portrait 3:4 ones make full-image crops valid)."""
    payload = {
        "publicAccount": "carbon-fitness",
        "topic": "晨练打卡",
        "contentType": "image_post",
        "candidates": {
            "titles": ["今天的晨练", "一起动起来"],
            "descriptions": ["早上六点的操场"],
            "imageGroups": [{"id": "g1", "label": "操场", "images": [{"assetId": a["assetId"]} for a in images]}],
            "commentSettings": [{"needOpenComment": False, "onlyFansCanComment": True}],
        },
    }
    payload.update(overrides)
    return payload


def create_task(client, headers, payload, status=201, **kwargs):
    response = client.post("/api/review/agent/tasks", json=payload, headers=headers, **kwargs)
    assert response.status_code == status, response.get_data(as_text=True)[:800]
    return response.get_json()


def decision_url(task):
    return f"/api/review/tasks/{task['id']}/decision"


def patch_url(task):
    return f"/api/review/agent/tasks/{task['id']}/elements"


def article_selections(task, cover, option_index=0):
    option = task["candidates"]["bodyOptions"][option_index]
    return {
        "author": "硅基君",
        "title": task["candidates"]["titles"][0],
        "summary": "一篇关于芯片的短文",
        "body": option["content"],
        "bodyImages": [],
        "coverImage": {"assetId": cover["assetId"]},
    }


def approve_article(task, cover, action="approve_without_publish", **extra):
    return {"action": action, "selections": article_selections(task, cover), **extra}


def full_crop(asset):
    return {"assetId": asset["assetId"], "cropPercentList": [{"ratio": "3_4", "x1": 0, "y1": 0, "x2": 1, "y2": 1}]}


def image_post_selections(images):
    return {
        "title": "今天的晨练",
        "description": "早上六点的操场",
        "images": [{"assetId": a["assetId"]} for a in images],
        "coverCrop": full_crop(images[0]),
        "commentSettings": {"needOpenComment": True, "onlyFansCanComment": False},
    }


def approve_image_post(images, action="approve_without_publish", **extra):
    return {"action": action, "selections": image_post_selections(images), **extra}


def locked_except(selections, rejected):
    return {key: value for key, value in selections.items() if key not in rejected}


def error_paths(response):
    return set(response.get_json()["error"]["details"])


@contextmanager
def live_server(app):
    """The app on a real threaded HTTP server on 127.0.0.1; yields its base URL."""
    served = Served(app)
    try:
        yield served.url
    finally:
        served.stop()


def outbox_count(event_type="review_task.rejected"):
    from models import OutboxMessage, db

    with db.connection_context():
        return OutboxMessage.select().where(OutboxMessage.event_type == event_type).count()


def sent_back_task(task_id="task_1", topic="芯片的未来", rejection_reason="style_mismatch", rejection_note="标题太长"):
    """A stand-in for a task sent back for rework (its title), as the agent's webhook of it reads one."""
    return SimpleNamespace(
        task_id=task_id,
        public_account="silicon-rise",
        content_type="article",
        topic=topic,
        rejected_elements=["title"],
        rejection_reason=rejection_reason,
        rejection_note=rejection_note,
    )

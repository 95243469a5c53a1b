"""What the fake platform accepts: the platform's limits and error codes, in one place."""

BODY_IMAGE_MAX = 1024 * 1024  # media/uploadimg: jpg/png under 1 MB
MATERIAL_IMAGE_MAX = 10 * 1024 * 1024  # material/add_material type image: 10 MB
CROP_RATIOS = {"1_1", "16_9", "2.35_1", "3_4"}
_MAGIC = [
    (b"\xff\xd8\xff", "jpg"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"BM", "bmp"),
]
CONTENT_TYPES = {"jpg": "image/jpeg", "png": "image/png", "gif": "image/gif", "bmp": "image/bmp"}
# The upload's file name must end in one of these, whatever its bytes are (else 40113).
UPLOAD_EXTENSIONS = {"material": (".jpg", ".jpeg", ".png", ".gif", ".bmp"), "uploadimg": (".jpg", ".jpeg", ".png")}


class Fault(Exception):
    """An errcode/errmsg answer."""

    def __init__(self, errcode, errmsg):
        super().__init__(errmsg)
        self.errcode, self.errmsg = errcode, errmsg


def check_upload_name(name, kind):
    if not name.lower().endswith(UPLOAD_EXTENSIONS[kind]):
        raise Fault(40113, "unsupported file type")


def image_kind(data):
    """'jpg', 'png', 'gif', 'bmp' from the file's first bytes (as the platform does), else None."""
    return next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)


TITLE_MAX = 64  # the API's limit; the platform's documents give 32 since 2025-12 (told: FakePlatform.title_limit)


def check_article(art, media_ok, title_max=TITLE_MAX, comments=True):
    """Raise Fault as the platform answers draft/add and draft/update for a bad article; `comments` False:
    the account lacks the comment privilege, so need_open_comment 1 is 88000
    (fakeplatform/samples/errors_88000_45003.json)."""
    if not isinstance(art, dict):
        raise Fault(47001, "data format error")
    kind = art.get("article_type", "news")
    if kind not in ("news", "newspic"):
        raise Fault(47003, "argument invalid! hint: article_type")
    title = art.get("title")
    if not isinstance(title, str) or not title:
        raise Fault(47003, "argument invalid! hint: title")
    if len(title) > title_max:
        raise Fault(45003, "title size out of limit")
    if len(art.get("author") or "") > 16:
        raise Fault(45110, "author size out of limit")
    if len(art.get("digest") or "") > 120:
        raise Fault(45004, "description size out of limit")
    content = art.get("content")
    if not isinstance(content, str) or not content.strip():
        raise Fault(44004, "empty content")
    if len(content) >= 20000 or len(content.encode("utf-8")) >= 1024 * 1024:
        raise Fault(45002, "content size out of limit")
    for flag in ("need_open_comment", "only_fans_can_comment"):
        if flag in art and (type(art[flag]) is not int or art[flag] not in (0, 1)):
            raise Fault(47003, f"argument invalid! hint: {flag}")
    if art.get("need_open_comment") == 1 and not comments:
        raise Fault(88000, "open comment without comment privilege")
    if kind == "news":
        if not media_ok(art.get("thumb_media_id")):
            raise Fault(40007, "invalid media_id")
        return
    images = (art.get("image_info") or {}).get("image_list")
    if not isinstance(images, list) or not 1 <= len(images) <= 20:
        raise Fault(47003, "argument invalid! hint: image_info.image_list")
    for item in images:
        if not isinstance(item, dict) or not media_ok(item.get("image_media_id")):
            raise Fault(40007, "invalid media_id")
    crops = (art.get("cover_info") or {}).get("crop_percent_list", [])
    if not isinstance(crops, list):
        raise Fault(47001, "data format error")
    for crop in crops:
        check_crop(crop)


def check_crop(crop):
    try:
        if crop["ratio"] not in CROP_RATIOS:
            raise ValueError
        if not all(isinstance(crop[k], str) for k in ("x1", "y1", "x2", "y2")):
            raise ValueError
        x1, y1, x2, y2 = (float(crop[k]) for k in ("x1", "y1", "x2", "y2"))
        if not (0 <= x1 < x2 <= 1 and 0 <= y1 < y2 <= 1):
            raise ValueError
    except (KeyError, TypeError, ValueError):
        raise Fault(47003, "argument invalid! hint: cover_info.crop_percent_list") from None

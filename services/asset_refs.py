"""Resolve asset references ({"assetId"} or an asset URL) and find them in Markdown."""
from models import Asset


def ref_key(ref):
    """The lookup key of a reference: ('id', value) or ('url', value); None when not a reference."""
    if isinstance(ref, dict) and isinstance(ref.get("assetId"), str):
        return ("id", ref["assetId"])
    if isinstance(ref, str) and ref:
        return ("url", ref)
    return None


def resolve_ref(ref):
    """The Asset a reference names, or None."""
    key = ref_key(ref)
    if key is None:
        return None
    if key[0] == "id":
        return Asset.get_or_none(Asset.asset_id == key[1])
    return Asset.select().where(Asset.url == key[1]).order_by(Asset.id).first()


def resolve_many(refs):
    """{index: Asset or None} for a list of references, in two queries at most."""
    keys = [ref_key(r) for r in refs]
    ids = {k[1] for k in keys if k and k[0] == "id"}
    urls = {k[1] for k in keys if k and k[0] == "url"}
    by_id = {a.asset_id: a for a in Asset.select().where(Asset.asset_id.in_(ids))} if ids else {}
    by_url = {}
    if urls:
        for asset in Asset.select().where(Asset.url.in_(urls)).order_by(Asset.id.desc()):
            by_url[asset.url] = asset
    out = {}
    for index, key in enumerate(keys):
        out[index] = None if key is None else (by_id if key[0] == "id" else by_url).get(key[1])
    return out


def markdown_image_refs(markdown):
    """Every image link target in Markdown, in order of first appearance."""
    from services.rendering import image_urls

    return image_urls(markdown or "")

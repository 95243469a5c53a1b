"""Body images made what the platform takes (services/images/platform_format.py): jpg or png of at most 1 MB,
transparency kept, anything else refused by name."""

import io

import pytest
from PIL import Image

from services.images.platform_format import image_kind, prepare_body_image, upload_name
from tests.helpers.images import encoded, noise_image, png_bytes

MB = 1024 * 1024


def test_prepare_body_image_keeps_small_jpg_and_png_untouched():
    png = png_bytes()
    jpg = encoded(Image.new("RGB", (30, 30), (1, 2, 3)), "JPEG")
    assert prepare_body_image(png) == (png, "image/png", "png")
    assert prepare_body_image(jpg) == (jpg, "image/jpeg", "jpg")


def test_prepare_body_image_keeps_transparency_and_shrinks_large_png():
    transparent = noise_image((900, 900), "RGBA")
    big = encoded(transparent, "PNG")
    assert len(big) > MB

    data, content_type, ext = prepare_body_image(big)

    image = Image.open(io.BytesIO(data))
    assert (content_type, ext, image.format, image.mode) == ("image/png", "png", "PNG", "RGBA")
    assert len(data) <= MB
    assert image.width < 900


def test_prepare_body_image_rejects_data_that_is_no_image():
    with pytest.raises(ValueError, match="cannot be read as an image"):
        prepare_body_image(b"not an image at all")


def test_a_gif_becomes_a_png_and_a_large_photo_a_smaller_jpeg():
    gif = encoded(Image.new("P", (40, 40), 3), "GIF")
    data, content_type, ext = prepare_body_image(gif)
    assert (content_type, ext, Image.open(io.BytesIO(data)).format) == ("image/png", "png", "PNG")
    photo = encoded(noise_image((1600, 1600)), "JPEG", quality=98)
    assert len(photo) > MB
    data, content_type, _ext = prepare_body_image(photo)
    assert content_type == "image/jpeg" and len(data) <= MB


def test_kinds_and_upload_names():
    assert image_kind(png_bytes()) == "png" and image_kind(b"plain text") is None
    assert upload_name("cover", "png").endswith(".png") and upload_name("a.jpeg", "jpg").endswith((".jpg", ".jpeg"))

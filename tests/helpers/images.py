"""Images made in memory for the tests of image handling (tests/images, tests/platform)."""

import io
import random

from PIL import Image


def png_bytes(size=(40, 30), color=(200, 30, 30), mode="RGB"):
    out = io.BytesIO()
    Image.new(mode, size, color).save(out, "PNG")
    return out.getvalue()


def noise_image(size, mode="RGB"):
    """Incompressible pixels (a fixed seed): an encoded size that a test can count on."""
    rng = random.Random(7)
    return Image.frombytes(mode, size, rng.randbytes(size[0] * size[1] * len(mode)))


def encoded(image, fmt, **options):
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()

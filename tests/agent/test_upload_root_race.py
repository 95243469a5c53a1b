"""MCP_UPLOAD_ROOT holds while the folders under it change (docs/api.md §16): upload_image's path is
opened one component at a time from the root, no component followed as a symlink, so a folder swapped for
a symlink between a check and the open can never make it read a file outside the root."""

import os
import sys
import threading

import pytest

from agentmcp.api import ApiError, read_upload

READS = 3000
INSIDE, OUTSIDE = b"inside the root", b"SECRET outside the root"


@pytest.fixture
def quick_switches():
    """Threads take turns often, so the swapper runs between read_upload's steps."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_a_folder_swapped_for_a_symlink_never_reads_outside_the_root(tmp_path, quick_switches):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "folder").mkdir(parents=True)
    outside.mkdir()
    (root / "folder" / "image.png").write_bytes(INSIDE)
    (outside / "image.png").write_bytes(OUTSIDE)
    (root / "kept").mkdir()
    stop = threading.Event()

    def swap():
        while not stop.is_set():
            os.rename(root / "folder", root / "kept" / "folder")
            os.symlink(outside, root / "folder")
            os.unlink(root / "folder")
            os.rename(root / "kept" / "folder", root / "folder")

    swapper = threading.Thread(target=swap, daemon=True)
    swapper.start()
    answers = {"inside": 0, "refused": 0, "outside": 0}
    try:
        reads = 0
        # At least READS reads, and on until one found the folder in place (a loaded machine may keep
        # the swapper mid-swap through the first READS).
        while reads < READS or (answers["inside"] == 0 and reads < 50 * READS):
            reads += 1
            try:
                data = read_upload(root.resolve(), "folder/image.png")
            except ApiError:
                answers["refused"] += 1
                continue
            answers["outside" if data == OUTSIDE else "inside"] += 1
    finally:
        stop.set()
        swapper.join()
    assert answers["outside"] == 0, answers
    assert answers["inside"] > 0, answers  # the reads did run while the folder was in place


def test_a_symlink_anywhere_on_the_path_is_not_followed(tmp_path):
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "real" / "image.png").write_bytes(INSIDE)
    (root / "alias").symlink_to(root / "real")  # inside the root, and still not followed
    assert read_upload(root, "real/image.png") == INSIDE
    assert read_upload(root, "real/../real/image.png") == INSIDE
    assert read_upload(root, str(root / "real" / "image.png")) == INSIDE
    assert read_upload(root, "../root/real/image.png") == INSIDE  # `..` is taken from the words: the root again
    for path in ("alias/image.png", "alias", "real/image.png/x", "real/missing.png", "../real/image.png", "a\0b"):
        with pytest.raises(ApiError) as refused:
            read_upload(root, path)
        assert refused.value.code == "validation_error" and list(refused.value.details) == ["path"], path
    with pytest.raises(ApiError) as refused:
        read_upload(root, "alias/image.png")
    assert refused.value.details == {"path": ["not under MCP_UPLOAD_ROOT"]}

/* The 3:4 cover crop chooser of image posts. The box is the largest 3:4 rectangle that fits the
   first image, scaled by "size" and placed by the two position sliders (or by dragging on the
   picture); the value is the coverCrop of the decision API, in fractions of the image (docs/api.md §4). */
(function () {
  "use strict";

  const RATIO = 3 / 4;
  let els = null;
  let image = null; // {assetId, url, width, height}
  let onChange = () => {};
  const T = window.T;

  const round = (value) => Math.round(value * 1e6) / 1e6;
  const clamp = (value, low, high) => Math.min(high, Math.max(low, value));

  function box() {
    const { width: W, height: H } = image;
    const largest = Math.min(W, H * RATIO);
    const w = largest * (Number(els.size.value) / 100);
    const h = w / RATIO;
    const left = (W - w) * (Number(els.x.value) / 100);
    const top = (H - h) * (Number(els.y.value) / 100);
    return { x1: left / W, y1: top / H, x2: (left + w) / W, y2: (top + h) / H, w, h };
  }

  function draw() {
    if (!image) return;
    const b = box();
    Object.assign(els.box.style, {
      left: `${b.x1 * 100}%`, top: `${b.y1 * 100}%`,
      width: `${(b.x2 - b.x1) * 100}%`, height: `${(b.y2 - b.y1) * 100}%`,
    });
    els.readout.textContent = T("crop.readout", {
      box: `${Math.round(b.w)}×${Math.round(b.h)}`, image: `${image.width}×${image.height}`,
      at: `(${Math.round(b.x1 * image.width)}, ${Math.round(b.y1 * image.height)})`,
    });
    onChange();
  }

  /* Put the sliders where a saved crop of the same image was. */
  function restore(saved) {
    const item = saved && saved.cropPercentList && saved.cropPercentList[0];
    if (!item || saved.assetId !== image.assetId) {
      els.size.value = 100; els.x.value = 50; els.y.value = 50;
      return;
    }
    const { width: W, height: H } = image;
    const w = (item.x2 - item.x1) * W;
    const h = (item.y2 - item.y1) * H;
    els.size.value = Math.round(clamp((w / Math.min(W, H * RATIO)) * 100, 20, 100));
    els.x.value = W - w > 0.5 ? Math.round(clamp((item.x1 * W) / (W - w), 0, 1) * 100) : 50;
    els.y.value = H - h > 0.5 ? Math.round(clamp((item.y1 * H) / (H - h), 0, 1) * 100) : 50;
  }

  function setImage(asset, saved) {
    image = asset && asset.width && asset.height ? asset : null;
    els.stage.hidden = !image;
    [els.size, els.x, els.y].forEach((input) => { input.disabled = !image; });
    if (!image) {
      els.readout.textContent = T("crop.none");
      onChange();
      return;
    }
    if (els.image.getAttribute("src") !== image.url) els.image.src = image.url;
    restore(saved);
    draw();
  }

  function value() {
    if (!image) return null;
    const b = box();
    return {
      assetId: image.assetId,
      cropPercentList: [{ ratio: "3_4", x1: round(b.x1), y1: round(b.y1), x2: round(b.x2), y2: round(b.y2) }],
    };
  }

  /* Dragging: the box centre follows the pointer. */
  function follow(event) {
    if (!image) return;
    const rect = els.stage.getBoundingClientRect();
    const b = box();
    const cx = ((event.clientX - rect.left) / rect.width) * image.width;
    const cy = ((event.clientY - rect.top) / rect.height) * image.height;
    if (image.width - b.w > 0.5) els.x.value = Math.round(clamp((cx - b.w / 2) / (image.width - b.w), 0, 1) * 100);
    if (image.height - b.h > 0.5) els.y.value = Math.round(clamp((cy - b.h / 2) / (image.height - b.h), 0, 1) * 100);
    draw();
  }

  function init(elements, changed) {
    els = elements;
    onChange = changed || onChange;
    [els.size, els.x, els.y].forEach((input) => input.addEventListener("input", draw));
    els.stage.addEventListener("pointerdown", (event) => {
      els.stage.setPointerCapture(event.pointerId);
      follow(event);
    });
    els.stage.addEventListener("pointermove", (event) => { if (event.buttons) follow(event); });
  }

  window.Crop = { init, setImage, value };
})();

/* /review/<taskId>: candidate pickers, editors, images, crop and preview wiring; the decision form;
   publish, retry, package download and delete. Every change goes through the JSON API. */
(function () {
  "use strict";

  const F = window.ReviewForm;
  const { task, assets, images } = F;
  const $ = (selector) => document.querySelector(selector);
  const T = window.T;

  /* Choosing another candidate replaces an edit only once the reviewer agrees; when declined, the
     previous choice (`current`, or none) stays checked. True to go on replacing. */
  function replaceConfirmed(edited, question, current, radio) {
    if (!edited || window.confirm(question)) return true;
    if (current) { current.checked = true; current.focus(); } else radio.checked = false;
    return false;
  }

  /* ---- text fields: counters and the "edited by hand" flag ---- */
  // Per field, whether it was edited by hand: read when another candidate is chosen, by which
  // time the checked radio (that textEdited compares against) has already changed.
  const textWasEdited = {};

  function refreshText(key) {
    const input = $(`#final-${key}`);
    const edited = F.textEdited(key);
    const counter = $(`[data-count-for="${key}"]`);
    counter.textContent = String(input.value.length);
    counter.classList.toggle("over", input.value.length > Number(counter.dataset.limit));
    // past what the platform's documents give (a title: 32), within what the API takes (docs/api.md §5)
    const warned = input.value.length > Number(counter.dataset.warn) && !counter.classList.contains("over");
    counter.classList.toggle("warn", warned);
    const note = $(`[data-warn-for="${key}"]`);
    if (note) note.hidden = !warned;
    $(`[data-edited-for="${key}"]`).hidden = !edited;
    textWasEdited[key] = edited;
  }

  F.TEXT_KEYS.forEach((key) => {
    let current = document.querySelector(`input[name="${key}-choice"]:checked`);
    document.querySelectorAll(`input[name="${key}-choice"]`).forEach((radio) => {
      radio.addEventListener("change", () => {
        if (!replaceConfirmed(textWasEdited[key], T("confirm.replace_text", { field: T(`field.${key}`).toLowerCase() }),
                              current, radio)) return;
        current = radio;
        $(`#final-${key}`).value = F.normalize(F.candidateText(key));
        refreshText(key);
      });
    });
    $(`#final-${key}`).addEventListener("input", () => refreshText(key));
    refreshText(key);
  });

  /* ---- article body: option, editor, theme (the preview is review_preview.js's) ---- */
  const refreshPreview = () => window.Preview.refresh();

  function bodyEdited(option) {
    return option ? $("#final-body").value !== F.normalize(option.content) : false;
  }

  function refreshBodyFlag() {
    $('[data-edited-for="body"]').hidden = !bodyEdited(F.bodyOption());
  }

  if (F.ARTICLE && $("#final-body")) {
    let current = F.bodyOption();
    document.querySelectorAll('input[name="body-choice"]').forEach((radio) => {
      radio.addEventListener("change", () => {
        const next = F.bodyOption();
        if (bodyEdited(current) && !window.confirm(T("confirm.replace_body"))) {
          document.querySelector(`input[name="body-choice"][value="${CSS.escape(current.id)}"]`).checked = true;
          return;
        }
        current = next;
        $("#final-body").value = F.normalize(next.content);
        refreshBodyFlag();
        refreshPreview();
      });
    });
    $("#final-body").addEventListener("input", refreshBodyFlag);
    const reset = $("#body-reset");  // absent on an article created without body options
    if (reset) reset.addEventListener("click", () => {
      const option = F.bodyOption();
      if (!option) return;
      $("#final-body").value = F.normalize(option.content);
      refreshBodyFlag();
      refreshPreview();
    });
    refreshBodyFlag();
  }

  /* ---- body image placeholders: the image picked for one replaces the one the body shows ---- */
  function tileUrl(input) {
    const ref = JSON.parse(input.dataset.ref);
    const asset = assets[typeof ref === "string" ? ref : ref.assetId];
    return asset ? asset.url : typeof ref === "string" ? ref : null;
  }

  function swapBodyImage(from, to) {
    const body = $("#final-body");
    if (!body || !from || !to || from === to) return;
    const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const next = body.value.replace(new RegExp(`(!\\[[^\\]]*\\]\\(\\s*<?)${escaped}(?=>?[\\s)])`, "g"), `$1${to}`);
    if (next === body.value) return;
    body.value = next;
    refreshBodyFlag();
    refreshPreview();
  }

  document.querySelectorAll('.tiles[id^="bodyimg-"]').forEach((container) => {
    const picked = () => container.querySelector("input:checked");
    let shown = picked() ? tileUrl(picked()) : null;
    container.addEventListener("change", () => {
      const url = picked() ? tileUrl(picked()) : null;
      swapBodyImage(shown, url);
      shown = url || shown;
    });
  });

  /* ---- image tiles filled from the material library ---- */
  function addTile(name, asset) {
    assets[asset.assetId] = asset;
    assets[asset.url] = asset;
    const container = document.getElementById(`${name}-tiles`);
    const same = [...container.querySelectorAll("input")].find((input) => F.identity(JSON.parse(input.dataset.ref)) === asset.assetId);
    if (same) {
      same.checked = true;
      same.dispatchEvent(new Event("change", { bubbles: true }));
      return;
    }
    const label = document.createElement("label");
    label.className = "tile";
    const input = Object.assign(document.createElement("input"), { type: "radio", name, value: asset.assetId, checked: true });
    input.dataset.ref = JSON.stringify({ assetId: asset.assetId });
    input.dataset.origin = "library"; // the reviewer's own pick (library or upload), not a candidate
    const img = Object.assign(document.createElement("img"), { src: asset.url, alt: asset.fileName });
    const caption = document.createElement("span");
    caption.textContent = `${asset.scope === "library" ? T("tile.library") : T("tile.uploaded")} · ${asset.width}×${asset.height}`;
    label.append(input, img, caption);
    container.append(label);
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  /* ---- image post: group, ordered images, cover crop ---- */
  function imageButton(text, label, action, handler, disabled) {
    const button = Object.assign(document.createElement("button"), { type: "button", textContent: text, disabled });
    button.setAttribute("aria-label", label);
    button.dataset.action = action;
    button.addEventListener("click", handler);
    return button;
  }

  /* The list was rebuilt, so the pressed button is gone: focus the same control of the image now at
     `index` (or its nearest enabled one, e.g. "down" once it is first), else the button that adds one. */
  function focusImageControl(index, action) {
    const items = $("#image-list").children;
    const item = items[Math.min(index, items.length - 1)];
    const buttons = item ? [...item.querySelectorAll("button:enabled")] : [];
    const target = buttons.find((button) => button.dataset.action === action) || buttons[0];
    (target || $('[data-library-for="images"]')).focus();
  }

  function renderImages() {
    const list = $("#image-list");
    list.replaceChildren();
    images.forEach((ref, index) => {
      const asset = assets[ref.assetId];
      const li = document.createElement("li");
      const img = Object.assign(document.createElement("img"), { src: asset ? asset.url : "", alt: asset ? asset.fileName : ref.assetId });
      const caption = document.createElement("span");
      caption.textContent = `${index + 1}. ${asset ? `${asset.fileName} · ${asset.width}×${asset.height}` : ref.assetId}${index === 0 ? ` ${T("image.cover")}` : ""}`;
      const move = (to, action) => () => {
        images.splice(to, 0, images.splice(index, 1)[0]);
        renderImages();
        focusImageControl(to, action);
      };
      const remove = () => {
        images.splice(index, 1);
        renderImages();
        focusImageControl(index, "remove");
      };
      const controls = document.createElement("div");
      controls.className = "controls";
      controls.append(
        imageButton("↑", T("image.up", { num: index + 1 }), "up", move(index - 1, "up"), index === 0),
        imageButton("↓", T("image.down", { num: index + 1 }), "down", move(index + 1, "down"), index === images.length - 1),
        imageButton(T("image.remove"), T("image.remove_label", { num: index + 1 }), "remove", remove, false));
      li.append(img, caption, controls);
      list.append(li);
    });
    window.Crop.setImage(images.length ? assets[images[0].assetId] : null, F.state.coverCrop);
  }

  if (!F.ARTICLE) {
    window.Crop.init({
      stage: $("#crop-stage"), image: $("#crop-image"), box: $("#crop-box"),
      size: $("#crop-size"), x: $("#crop-x"), y: $("#crop-y"), readout: $("#crop-readout"),
    });
    const groupOf = (radio) => (task.candidates.imageGroups || []).find((g) => g.id === radio.value);
    let currentGroup = document.querySelector('input[name="group-choice"]:checked');
    document.querySelectorAll('input[name="group-choice"]').forEach((radio) => {
      radio.addEventListener("change", () => {
        // Edited = not the list the previous choice gave (with no group chosen: the list the page opened with).
        const before = currentGroup ? groupOf(currentGroup).images : F.state.images || [];
        if (!replaceConfirmed(!F.sameRefs(before, images),
                              T("confirm.replace_images"),
                              currentGroup, radio)) return;
        currentGroup = radio;
        images.splice(0, images.length, ...groupOf(radio).images.map((ref) => ({ assetId: ref.assetId })));
        renderImages();
      });
    });
    renderImages();
  }

  document.querySelectorAll("[data-library-for]").forEach((button) => {
    button.addEventListener("click", () => {
      const target = button.dataset.libraryFor;
      window.Library.open((asset) => {
        if (target === "images") {
          assets[asset.assetId] = asset;
          const at = images.findIndex((ref) => ref.assetId === asset.assetId);
          if (at >= 0) { // the same picture twice would be published twice
            window.Api.showMessage($('[data-error-for="images"]'), T("image.twice", { name: asset.fileName, num: at + 1 }));
            button.focus();
            return;
          }
          $('[data-error-for="images"]').hidden = true;
          images.push({ assetId: asset.assetId });
          renderImages();
        } else {
          addTile(target, asset);
        }
        button.focus();
      });
    });
  });

})();

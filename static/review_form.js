/* The selection form of /review/<taskId>: reads the reviewer's picks and edits into the shapes the
   decision API expects (POST .../decision; docs/api.md §4 "Selections, references, overrides").

   - selections: the complete set for the content type;
   - manualOverrides: only fields the reviewer rewrote by hand or filled from the library, each
     {basedOn, value} (body: {basedOnCandidateId, value}) with value equal to the final selection;
   - bodyDraft: {markdown, sourceBodyCandidateId, sourceBodyCandidate, bodyEditedFromCandidate, themeTemplate}. */
(function () {
  "use strict";

  const readJson = (id) => JSON.parse(document.getElementById(id).textContent);
  const task = readJson("task-json");
  const assets = readJson("assets-json");
  const state = readJson("state-json");
  const ARTICLE = task.contentType === "article";
  const LISTS = { title: "titles", summary: "summaries", author: "authors", description: "descriptions" };
  const TEXT_KEYS = ARTICLE ? ["title", "summary", "author"] : ["title", "description"];
  const OVERRIDABLE = ARTICLE ? ["title", "summary"] : ["title", "description"];
  const images = (state.images || []).map((ref) => ({ assetId: ref.assetId }));
  const stored = task.manualOverrides || {};
  const initialText = Object.fromEntries((state.text || []).map((field) => [field.key, field.value]));

  const $ = (selector) => document.querySelector(selector);
  const checked = (name) => document.querySelector(`input[name="${CSS.escape(name)}"]:checked`);
  const normalize = (text) => String(text).replace(/\r\n?/g, "\n");

  /* A textarea hands back "\n" line ends: untouched candidate text is sent exactly as it came. */
  function finalText(element, candidate) {
    return candidate != null && element.value === normalize(candidate) ? candidate : element.value;
  }

  function candidateText(key) {
    const radio = checked(`${key}-choice`);
    return radio ? (task.candidates[LISTS[key]] || [])[Number(radio.value)] : null;
  }

  function textValue(key) {
    return finalText($(`#final-${key}`), candidateText(key));
  }

  function bodyOption() {
    const radio = checked("body-choice");
    return radio ? (task.candidates.bodyOptions || []).find((option) => option.id === radio.value) || null : null;
  }

  function bodyMarkdown() {
    const option = bodyOption();
    return finalText($("#final-body"), option ? option.content : null);
  }

  function identity(ref) {
    if (ref === null || ref === undefined) return null;
    const asset = assets[typeof ref === "string" ? ref : ref.assetId];
    return asset ? asset.assetId : JSON.stringify(ref);
  }

  const sameRefs = (a, b) => a.length === b.length && a.every((ref, i) => identity(ref) === identity(b[i]));

  function chosenImage(name) {
    const radio = checked(name);
    return radio ? { ref: JSON.parse(radio.dataset.ref), origin: radio.dataset.origin } : null;
  }

  function chosenGroup() {
    const radio = checked("group-choice");
    return radio ? (task.candidates.imageGroups || []).find((group) => group.id === radio.value) || null : null;
  }

  /* A value nobody changed on this page keeps the override saved with it (if any): a value the
     agent patched in is not the reviewer's edit and gets none. */
  function keepStored(overrides, key, same) {
    const saved = stored[key];
    if (saved && same(saved.value)) overrides[key] = saved;
  }

  function textEdited(key) {
    const value = textValue(key);
    const candidate = candidateText(key);
    return candidate != null ? value !== candidate : normalize(value) !== normalize(initialText[key] || "");
  }

  function collectText(selections, overrides) {
    TEXT_KEYS.forEach((key) => {
      const value = textValue(key);
      if (key === "author" && !value.trim()) return;
      selections[key] = value;
      if (!OVERRIDABLE.includes(key)) return;
      const candidate = candidateText(key);
      if (!textEdited(key)) {
        if (candidate == null) keepStored(overrides, key, (saved) => saved === value);
        return;
      }
      const basedOn = candidate != null ? candidate : (stored[key] || {}).basedOn;
      overrides[key] = { basedOn: basedOn != null ? basedOn : initialText[key] || "", value };
    });
  }

  function collectBody(selections, overrides) {
    const option = bodyOption();
    const markdown = bodyMarkdown();
    selections.body = markdown;
    if (!(task.candidates.bodyOptions || []).length) {
      // Created with titles only: the body is the reviewer's own, with no option to name.
      return { markdown, sourceBodyCandidateId: null, themeTemplate: $("#theme-template").value };
    }
    if (!option) return null;
    const edited = markdown !== option.content;
    if (edited) {
      const changedHere = option.id !== state.body.source || normalize(markdown) !== normalize(state.body.markdown);
      if (changedHere) overrides.body = { basedOnCandidateId: option.id, value: markdown };
      else keepStored(overrides, "body", (saved) => saved === markdown);
    }
    return {
      markdown, sourceBodyCandidateId: option.id, sourceBodyCandidate: option.content,
      bodyEditedFromCandidate: edited, themeTemplate: $("#theme-template").value,
    };
  }

  function collectArticleImages(selections, overrides) {
    const cover = chosenImage("cover-choice");
    if (cover) {
      selections.coverImage = cover.ref;
      const first = (task.candidates.coverImages || [])[0];
      if (cover.origin === "library") overrides.coverImage = { basedOn: first === undefined ? null : first, value: cover.ref };
      if (cover.origin === "saved") keepStored(overrides, "coverImage", (saved) => identity(saved) === identity(cover.ref));
    }
    const placeholders = task.candidates.bodyImageCandidates || [];
    const chosen = placeholders.map((_, index) => chosenImage(`bodyimg-${index}`));
    if (!placeholders.length || !chosen.every(Boolean)) return;
    const value = chosen.map((item) => item.ref);
    selections.bodyImages = value;
    if (chosen.some((item) => item.origin === "library")) {
      overrides.bodyImages = { basedOn: placeholders.map((p) => p.options[0]), value };
    } else if (chosen.some((item) => item.origin === "saved")) {
      keepStored(overrides, "bodyImages", (saved) => sameRefs(saved, value));
    }
  }

  function collectImagePost(selections, overrides) {
    if (images.length) {
      const value = images.map((ref) => ({ assetId: ref.assetId }));
      selections.images = value;
      const group = chosenGroup();
      const initial = state.images || [];
      if (group && sameRefs(group.images, value)) {
        // picked as the agent proposed it
      } else if (sameRefs(initial, value)) {
        keepStored(overrides, "images", (saved) => sameRefs(saved, value));
      } else {
        overrides.images = { basedOn: group ? group.images : (initial.length ? initial : null), value };
      }
    }
    const crop = window.Crop.value();
    if (crop) selections.coverCrop = crop;
    selections.commentSettings = {
      needOpenComment: $("#need-open-comment").checked,
      onlyFansCanComment: $("#only-fans").checked,
    };
  }

  function collect() {
    const selections = {};
    const overrides = {};
    collectText(selections, overrides);
    const bodyDraft = ARTICLE ? collectBody(selections, overrides) : null;
    if (ARTICLE) collectArticleImages(selections, overrides);
    else collectImagePost(selections, overrides);
    return { selections, manualOverrides: overrides, bodyDraft };
  }

  /* The body of POST /api/review/tasks/<id>/decision for `action`. */
  function decisionPayload(action, rejected, reason, note) {
    const { selections, manualOverrides, bodyDraft } = collect();
    if (action !== "reject_rework") {
      const payload = { action, selections };
      if (Object.keys(manualOverrides).length) payload.manualOverrides = manualOverrides;
      if (bodyDraft) payload.bodyDraft = bodyDraft;
      return payload;
    }
    const payload = { action };
    if (reason) payload.rejectionReason = reason;
    if (note.trim()) payload.rejectionNote = note.trim();
    if (!rejected.length) return payload; // the whole task goes back; selections are not needed
    const locked = {};
    Object.keys(selections).forEach((key) => { if (!rejected.includes(key)) locked[key] = selections[key]; });
    const kept = {};
    Object.keys(manualOverrides).forEach((key) => { if (!rejected.includes(key)) kept[key] = manualOverrides[key]; });
    Object.assign(payload, { selections, rejectedElements: rejected, lockedSelections: locked });
    if (Object.keys(kept).length) payload.manualOverrides = kept;
    if (bodyDraft && !rejected.includes("body")) payload.bodyDraft = bodyDraft;
    return payload;
  }

  window.ReviewForm = {
    task, assets, state, images, ARTICLE, TEXT_KEYS, candidateText, textValue, bodyOption, bodyMarkdown,
    normalize, identity, sameRefs, decisionPayload, collect, textEdited,
  };
})();

/* /review/<taskId>: the decision form, publish, retry, package download and delete, all through the
   JSON API (If-Match carries the version the page shows, so a stale page never overwrites). */
(function () {
  "use strict";

  const F = window.ReviewForm;
  const { task } = F;
  const base = `/api/review/tasks/${encodeURIComponent(task.id)}`;
  const $ = (selector) => document.querySelector(selector);
  const T = window.T;
  const pageError = $("#page-error");
  const pageMessage = $("#page-message");
  const toolbarError = $("#toolbar-error");  // beside the toolbar's buttons (download, delete)
  const WRAPPERS = ["selections", "lockedSelections", "manualOverrides"];

  /* An error path of the decision API -> the data-error-for key of the field it concerns. */
  function fieldFor(path) {
    const parts = path.split(".");
    if (WRAPPERS.includes(parts[0])) return parts[1] || null;
    if (parts[0] === "bodyDraft") return "body";
    return parts[0];
  }

  function busy(button, text) {
    const before = button.textContent;
    button.disabled = true;
    button.textContent = text;
    return () => { button.disabled = false; button.textContent = before; };
  }

  /* While a publish runs (its request answers only when it ends): the step it is at, read from
     publish-progress, and every control of the page that changes the task disabled. */
  const progressLine = $("#publish-progress");
  function followPublish() {
    const controls = [...document.querySelectorAll("#decision-form :is(input, select, textarea, button), #publish-btn, .retry-btn, #delete-btn")]
      .filter((element) => !element.disabled);
    controls.forEach((element) => { element.disabled = true; });
    let stopped = false;
    const words = (p) => (p.step === "uploading_images" ? T("publish.uploading", { done: p.done, total: p.total })
      : p.step === "saving_draft" ? T("publish.saving") : T("publish.starting"));
    (async function poll() {
      while (!stopped) {
        const result = await window.Api.call("GET", `${base}/publish-progress`);
        if (stopped) break;
        if (result.ok && result.data.running) {
          progressLine.textContent = words(result.data);
          progressLine.hidden = false;
        }
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
    })();
    return () => {
      stopped = true;
      progressLine.hidden = true;
      controls.forEach((element) => { element.disabled = false; });
    };
  }

  /* The newest job the call added, in words: {ok} for the notice or {failure} for the error banner. */
  function jobOutcome(updated, before) {
    const added = (updated.publishJobs || []).filter((job) => !before.some((old) => old.id === job.id));
    const job = added[added.length - 1];
    if (!job) return {};
    return job.status === "succeeded"
      ? { ok: T("publish.done") }  // the draft's media id is the jobs table's, small: it means nothing here
      : { failure: T("publish.failed", { error: job.lastError || T("publish.no_reason") }) };
  }

  /* One entry of details.faultyImages in words: which field, which file, what is wrong. */
  function faultyImage(item) {
    if (typeof item !== "object" || item === null) return String(item);
    const [, name, index] = String(item.field || "").match(/^(?:selections\.)?(\w+)(?:\.(\d+))?/) || [];
    const word = name && window.Words.has(`field.${name}`) ? T(`field.${name}`).toLowerCase() : name || T("image.an_image");
    const field = word + (index === undefined ? "" : ` ${Number(index) + 1}`);
    const asset = F.assets[item.ref];
    return `${field} (${asset ? asset.fileName : item.ref}): ${item.reason}`;
  }

  /* ---- the decision panel: a bar fixed at the bottom on phones; the page ends above it ---- */
  const panel = $('[data-role="decision"]');
  const layout = $(".task-layout");
  if (panel && layout && window.ResizeObserver) {
    new ResizeObserver(() => {
      const fixed = getComputedStyle(panel).position === "fixed";
      layout.style.setProperty("--decision-bar", fixed ? `${Math.ceil(panel.offsetHeight) + 16}px` : "0px");
    }).observe(panel);
  }

  /* ---- decision ---- */
  const form = $("#decision-form");
  if (form) {
    const details = $("#reject-details");
    const syncDetails = () => {
      details.disabled = details.hidden = form.elements.action.value !== "reject_rework";
    };
    form.querySelectorAll('input[name="action"]').forEach((radio) => radio.addEventListener("change", syncDetails));
    syncDetails();
    const imagesBox = form.querySelector('input[name="rejectedElements"][value="images"]');
    const cropBox = form.querySelector('input[name="rejectedElements"][value="coverCrop"]');
    if (imagesBox && cropBox) {
      // The crop belongs to the first image, so new images usually need a new crop (the reviewer may untick it).
      imagesBox.addEventListener("change", () => { if (imagesBox.checked) cropBox.checked = true; });
    }

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      window.Api.clearErrors(document);
      $("#decision-error").hidden = true;
      const action = form.elements.action.value;
      if (!action) {
        window.Api.showErrors(document, { message: T("decision.choose"), details: { action: [T("decision.choose_one")] }, said: true }, null, $("#decision-error"));
        form.querySelector('input[name="action"]').focus();
        return;
      }
      const rejected = [...form.querySelectorAll('input[name="rejectedElements"]:checked')].map((box) => box.value);
      const payload = F.decisionPayload(action, rejected, $("#rejection-reason").value, $("#rejection-note").value);
      const done = busy($("#decision-submit"), T("busy.submitting"));
      const ended = action === "approve_and_publish" ? followPublish() : () => {};
      const result = await window.Api.call("POST", `${base}/decision`, payload, { ifMatch: task.version });
      ended();
      if (result.ok) {
        const words = { approve_and_publish: T("decision.approved"), approve_without_publish: T("decision.approved_only"), reject_rework: T("decision.rejected") };
        const outcome = jobOutcome(result.data, task.publishJobs);
        window.Api.flash([words[action], outcome.ok].filter(Boolean).join(" "), outcome.failure);
        window.location.reload();
        return;
      }
      done();
      if (result.status === 412) window.Presence.stale($("#decision-error"));  // docs/api.md §15: offer a reload
      else window.Api.showErrors(document, result.error, fieldFor, $("#decision-error"));
    });
  }

  /* ---- publish and retry ---- */
  async function publish(button, url, label) {
    pageError.hidden = true;
    const done = busy(button, label);
    const ended = followPublish();
    const result = await window.Api.call("POST", url, undefined, { ifMatch: task.version });
    ended();
    if (result.ok) {
      const outcome = jobOutcome(result.data, task.publishJobs);
      window.Api.flash(outcome.ok || (outcome.failure ? "" : T("publish.finished")), outcome.failure);
      window.location.reload();
      return;
    }
    done();
    window.Api.showMessage(pageError, window.Api.describe(result.error));
  }

  const publishButton = $("#publish-btn");
  if (publishButton) publishButton.addEventListener("click", () => publish(publishButton, `${base}/publish-jobs`, T("busy.publishing")));
  document.querySelectorAll(".retry-btn").forEach((button) => {
    const url = `${base}/publish-jobs/${encodeURIComponent(button.dataset.jobId)}/retry`;
    button.addEventListener("click", () => publish(button, url, T("busy.retrying")));
  });

  /* ---- phone preview: the current draft to one follower's phone (a preview_sent timeline event). The
     result shows beside the button and in the decision panel's live region, both in view. ---- */
  const previewForm = $("#phone-preview");
  if (previewForm) {
    const beside = $("#phone-preview-result");
    const tell = (text, failed) => {
      beside.textContent = text;
      beside.classList.toggle("error", Boolean(failed));
      beside.hidden = false;
      window.Api.showMessage(failed ? pageError : pageMessage, text);
      (failed ? pageMessage : pageError).hidden = true;
    };
    previewForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      window.Api.clearErrors(previewForm);
      pageError.hidden = true;
      beside.hidden = true;
      const chosen = previewForm.elements.recipient ? previewForm.elements.recipient.value : "";
      const wechatName = chosen || previewForm.elements.wechatName.value.trim();
      const done = busy($("#phone-preview-btn"), T("busy.sending"));
      const result = await window.Api.call("POST", `${base}/preview`, { wechatName }, { ifMatch: task.version });
      done();
      if (result.ok) {
        tell(T("preview.sent", { name: wechatName }));
        const events = result.data.timeline || [];
        addTimelineEvent(events[events.length - 1]);
        task.version = result.data.version;
        return;
      }
      if (result.error.code === "validation_error") {
        window.Api.showErrors(previewForm, result.error, (path) => path, null);
      }
      tell(window.Api.describe(result.error), true);  // the platform's errcode is in the message
    });
  }

  /* The preview_sent event the answer added, at the top of the timeline (the page is not reloaded, so the
     reviewer stays at the button). */
  function addTimelineEvent(event) {
    const list = $(".timeline");
    if (!event || !list || event.type !== "preview_sent") return;
    const item = document.createElement("li");
    item.dataset.event = event.type;
    const time = Object.assign(document.createElement("time"), { dateTime: event.at });
    const kind = Object.assign(document.createElement("strong"), { textContent: T("event.preview_sent") });
    const who = Object.assign(document.createElement("span"), { className: "muted", textContent: T("event.by", { who: event.actorName || event.actor }) });
    const to = Object.values((event.data || {}).to || {}).join(", ");
    const data = Object.assign(document.createElement("span"), { className: "event-data", textContent: `${T("event.recipient")}: ${to}` });
    item.append(time, " ", kind, " ", who, " ", data);
    list.prepend(item);
    window.Words.showTimes(item);
  }

  /* ---- package download: errors (409 export_failed) are shown in words instead of a JSON page ---- */
  $("#package-btn").addEventListener("click", async (event) => {
    pageError.hidden = toolbarError.hidden = true;
    const done = busy(event.currentTarget, T("busy.preparing"));
    const result = await window.Api.call("GET", `${base}/package`, undefined, { raw: true });
    done();
    if (!result.ok) {
      const faulty = [].concat((result.error.details || {}).faultyImages || []);
      const text = [window.Api.describe(result.error), ...faulty.map(faultyImage).map(window.Api.sentence)].join(" ");
      window.Api.showMessage(toolbarError, text);
      return;
    }
    const url = URL.createObjectURL(await result.response.blob());
    const link = Object.assign(document.createElement("a"), { href: url, download: `review-${task.id}.zip` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  });

  /* ---- delete ---- */
  $("#delete-btn").addEventListener("click", async (event) => {
    // An article sent to readers stays on WeChat (docs/api.md §18): the question says so, as it stands.
    const standing = task.live ? task.live.status : "";
    const question = standing === "live" ? "confirm.delete_live"
      : ["submitting", "publishing"].includes(standing) ? "confirm.delete_publishing" : "confirm.delete";
    if (!window.confirm(T(question, { topic: task.topic }))) return;
    pageError.hidden = toolbarError.hidden = true;
    const done = busy(event.currentTarget, T("busy.deleting"));
    const result = await window.Api.call("DELETE", base, undefined, { ifMatch: task.version });
    if (result.ok) {
      window.Api.flash(T("deleted", { topic: task.topic, count: result.data.deletedFileCount }));
      window.location.assign(result.data.redirectTo || "/review");
      return;
    }
    done();
    window.Api.showMessage(toolbarError, window.Api.describe(result.error));
  });
})();

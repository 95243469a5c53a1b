/* /review/<taskId>: the decision form, publish, retry, package download and delete, all through the
   JSON API (If-Match carries the version the page shows, so a stale page never overwrites). */
(function () {
  "use strict";

  const F = window.ReviewForm;
  const { task } = F;
  const base = `/api/review/tasks/${encodeURIComponent(task.id)}`;
  const $ = (selector) => document.querySelector(selector);
  const pageError = $("#page-error");
  const WRAPPERS = ["selections", "lockedSelections", "manualOverrides"];
  const FIELD_WORDS = {
    coverImage: "cover image", bodyImages: "body image", images: "image", coverCrop: "cover crop", body: "body",
  };

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
    const words = (p) => (p.step === "uploading_images" ? `Uploading images: ${p.done} of ${p.total}…`
      : p.step === "saving_draft" ? "Saving the draft on WeChat…" : "Starting the publish…");
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
      ? { ok: `Published as WeChat draft ${job.draftMediaId}.` }
      : { failure: `Publishing failed: ${job.lastError || "no reason given"}. Fix the cause and retry the job.` };
  }

  /* One entry of details.faultyImages in words: which field, which file, what is wrong. */
  function faultyImage(item) {
    if (typeof item !== "object" || item === null) return String(item);
    const [, name, index] = String(item.field || "").match(/^(?:selections\.)?(\w+)(?:\.(\d+))?/) || [];
    const field = (FIELD_WORDS[name] || name || "an image") + (index === undefined ? "" : ` ${Number(index) + 1}`);
    const asset = F.assets[item.ref];
    return `${field} (${asset ? asset.fileName : item.ref}): ${item.reason}`;
  }

  /* ---- decision ---- */
  const form = $("#decision-form");
  if (form) {
    const details = $("#reject-details");
    const syncDetails = () => { details.disabled = form.elements.action.value !== "reject_rework"; };
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
        window.Api.showErrors(document, { message: "choose what should happen to this task", details: { action: ["choose one of the three decisions"] } }, null, $("#decision-error"));
        form.querySelector('input[name="action"]').focus();
        return;
      }
      const rejected = [...form.querySelectorAll('input[name="rejectedElements"]:checked')].map((box) => box.value);
      const payload = F.decisionPayload(action, rejected, $("#rejection-reason").value, $("#rejection-note").value);
      const done = busy($("#decision-submit"), "Submitting…");
      const ended = action === "approve_and_publish" ? followPublish() : () => {};
      const result = await window.Api.call("POST", `${base}/decision`, payload, { ifMatch: task.version });
      ended();
      if (result.ok) {
        const words = { approve_and_publish: "Approved.", approve_without_publish: "Approved without publishing.", reject_rework: "Sent back to the agent for rework." };
        const outcome = jobOutcome(result.data, task.publishJobs);
        window.Api.flash([words[action], outcome.ok].filter(Boolean).join(" "), outcome.failure);
        window.location.reload();
        return;
      }
      done();
      if (result.status === 412) window.Presence.stale($("#decision-error"));  // CONTRACT §15: offer a reload
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
      window.Api.flash(outcome.ok || (outcome.failure ? "" : "Publish attempt finished."), outcome.failure);
      window.location.reload();
      return;
    }
    done();
    window.Api.showMessage(pageError, result.error.message);
  }

  const publishButton = $("#publish-btn");
  if (publishButton) publishButton.addEventListener("click", () => publish(publishButton, `${base}/publish-jobs`, "Publishing…"));
  document.querySelectorAll(".retry-btn").forEach((button) => {
    const url = `${base}/publish-jobs/${encodeURIComponent(button.dataset.jobId)}/retry`;
    button.addEventListener("click", () => publish(button, url, "Retrying…"));
  });

  /* ---- phone preview: the current draft to one follower's phone (a preview_sent timeline event) ---- */
  const previewForm = $("#phone-preview");
  if (previewForm) {
    previewForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      window.Api.clearErrors(previewForm);
      pageError.hidden = true;
      const chosen = previewForm.elements.recipient ? previewForm.elements.recipient.value : "";
      const wechatName = chosen || previewForm.elements.wechatName.value.trim();
      const done = busy($("#phone-preview-btn"), "Sending…");
      const result = await window.Api.call("POST", `${base}/preview`, { wechatName }, { ifMatch: task.version });
      if (result.ok) {
        window.Api.flash(`Preview sent to ${wechatName}'s phone.`);
        window.location.reload();
        return;
      }
      done();
      if (result.error.code === "validation_error") window.Api.showErrors(previewForm, result.error, (path) => path, pageError);
      else window.Api.showMessage(pageError, result.error.message);  // the platform's errcode is in the message
    });
  }

  /* ---- package download: errors (409 export_failed) are shown in words instead of a JSON page ---- */
  $("#package-btn").addEventListener("click", async (event) => {
    pageError.hidden = true;
    const done = busy(event.currentTarget, "Preparing…");
    const result = await window.Api.call("GET", `${base}/package`, undefined, { raw: true });
    done();
    if (!result.ok) {
      const faulty = [].concat((result.error.details || {}).faultyImages || []);
      window.Api.showMessage(pageError, [result.error.message, ...faulty.map(faultyImage)].map(window.Api.sentence).join(" "));
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
    if (!window.confirm(`Delete the task "${task.topic}"? Its uploaded review images are removed too. This cannot be undone.`)) return;
    pageError.hidden = true;
    const done = busy(event.currentTarget, "Deleting…");
    const result = await window.Api.call("DELETE", base, undefined, { ifMatch: task.version });
    if (result.ok) {
      window.Api.flash(`Deleted the task "${task.topic}" (${result.data.deletedFileCount} files removed).`);
      window.location.assign(result.data.redirectTo || "/review");
      return;
    }
    done();
    window.Api.showMessage(pageError, result.error.message);
  });
})();

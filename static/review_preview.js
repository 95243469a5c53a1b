/* The live WeChat preview of an article (docs/api.md §14): the body rendered by the publish renderer with
   its theme (POST /api/review/preview, the route publishing's rendering sits behind), in a 375 px frame
   under the final title, author, account and date. It follows the typing: each pause of a quarter
   second sends one request, and steady typing one at least every MAX_WAIT (the preview is never more
   than about a second behind); only the newest answer is shown. */
(function () {
  "use strict";

  const frame = document.querySelector('[data-role="preview"]');
  const F = window.ReviewForm;
  if (!frame || !F || !F.ARTICLE) { window.Preview = { refresh() {}, schedule() {} }; return; }
  const T = window.T;
  const body = document.getElementById("preview");
  const error = document.getElementById("preview-error");
  const state = document.getElementById("preview-state");
  const theme = document.getElementById("theme-template");
  const DELAY = 250;
  const MAX_WAIT = 600;
  let timer = null;
  let waitingSince = null; // when the first keystroke not yet rendered came
  let sent = 0;

  async function refresh() {
    clearTimeout(timer);
    waitingSince = null;
    const number = ++sent;
    state.textContent = T("preview.updating");
    const result = await window.Api.call("POST", "/api/review/preview", {
      markdown: F.bodyMarkdown(), themeTemplate: theme.value, publicAccount: F.task.publicAccount,
    });
    if (number !== sent) return; // a newer request is on its way
    state.textContent = "";
    if (result.ok) {
      body.innerHTML = result.data.html; // sanitized by the server (nh3), inline styles only
      error.hidden = true;
      frame.dataset.rendered = String(number);
    } else {
      error.textContent = window.Api.describe(result.error);
      error.hidden = false;
    }
  }

  function schedule() {
    clearTimeout(timer);
    const now = Date.now();
    if (waitingSince === null) waitingSince = now;
    timer = setTimeout(refresh, Math.max(0, Math.min(DELAY, waitingSince + MAX_WAIT - now)));
  }

  /* The title and author above the article follow their fields at once (no request needed). */
  function header() {
    ["title", "author"].forEach((key) => {
      const input = document.getElementById(`final-${key}`);
      const slot = frame.querySelector(`[data-preview="${key}"]`);
      if (input && slot) slot.textContent = input.value;
    });
  }
  ["title", "author"].forEach((key) => {
    const input = document.getElementById(`final-${key}`);
    if (input) input.addEventListener("input", header);
  });
  document.querySelectorAll('input[name="title-choice"], input[name="author-choice"]').forEach((radio) => {
    radio.addEventListener("change", () => setTimeout(header));  // after the field took the candidate
  });

  document.getElementById("final-body").addEventListener("input", schedule);
  theme.addEventListener("change", refresh);

  window.Preview = { refresh, schedule };
})();

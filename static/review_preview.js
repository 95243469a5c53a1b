/* The live WeChat preview of a task (docs/api.md §14).

   An article: the body rendered by the publish renderer with its theme (POST /api/review/preview, the route
   publishing's rendering sits behind), in a 375 px frame under the final title, author, account and date. It
   follows the typing: each pause of a quarter second sends one request, and steady typing one at least every
   MAX_WAIT (the preview is never more than about a second behind); only the newest answer is shown. It follows
   the cursor too: the frame scrolls to the part of the article around the line being edited.

   An image post: the newspic card (the images in order, the title, the description), rebuilt in the page as
   the reviewer edits; nothing to render on the server. */
(function () {
  "use strict";

  const frame = document.querySelector('[data-role="preview"]');
  const F = window.ReviewForm;
  window.Preview = { refresh() {}, schedule() {}, follow() {} };
  if (!frame || !F) return;
  const T = window.T;

  /* The text above the article or under the images follows its field at once (no request needed). */
  const HEADER_KEYS = ["title", "author", "description"];
  function header() {
    HEADER_KEYS.forEach((key) => {
      const input = document.getElementById(`final-${key}`);
      const slot = frame.querySelector(`[data-preview="${key}"]`);
      if (input && slot) slot.textContent = input.value;
    });
  }
  HEADER_KEYS.forEach((key) => {
    const input = document.getElementById(`final-${key}`);
    if (input) input.addEventListener("input", header);
    document.querySelectorAll(`input[name="${key}-choice"]`).forEach((radio) => {
      radio.addEventListener("change", () => setTimeout(header));  // after the field took the candidate
    });
  });

  if (F.ARTICLE) article();
  else post();

  /* A long body option is rendered when asked for (its button), through the same route as the preview. */
  document.querySelectorAll("[data-render-option]").forEach((button) => {
    button.addEventListener("click", async () => {
      const option = (F.task.candidates.bodyOptions || []).find((o) => o.id === button.dataset.renderOption);
      const slot = button.closest(".rendered");
      if (!option || !slot) return;
      button.disabled = true;
      const result = await window.Api.call("POST", "/api/review/preview", {
        markdown: option.content, themeTemplate: "default", publicAccount: F.task.publicAccount,
      });
      if (result.ok) {
        slot.classList.remove("deferred");
        slot.innerHTML = result.data.html; // sanitized by the server (nh3), inline styles only
      } else {
        button.disabled = false;
        const message = slot.querySelector(".hint");
        message.textContent = window.Api.describe(result.error);
      }
    });
  });

  /* ---- an image post: the card's images follow the list (review_detail.js rebuilds #image-list) ---- */
  function post() {
    const gallery = frame.querySelector('[data-preview="images"]');
    const count = frame.querySelector('[data-preview="count"]');
    const list = document.getElementById("image-list");
    if (!gallery || !list) return;
    function images() {
      const shown = F.images.map((ref) => F.assets[ref.assetId]).filter(Boolean);
      // The pictures repeat the list above, which names them: here they are decoration (alt="").
      gallery.replaceChildren(...shown.map((asset) => Object.assign(document.createElement("img"), { src: asset.url, alt: "" })));
      count.textContent = T("preview.images", { num: shown.length });
    }
    new MutationObserver(images).observe(list, { childList: true });
    images();
  }

  /* ---- an article ---- */
  function article() {
    const body = document.getElementById("preview");
    const editor = document.getElementById("final-body");
    const error = document.getElementById("preview-error");
    const state = document.getElementById("preview-state");
    const theme = document.getElementById("theme-template");
    const DELAY = 250;
    const MAX_WAIT = 600;
    let timer = null;
    let waitingSince = null; // when the first keystroke not yet rendered came
    let sent = 0;
    let following = false; // from the first time the reviewer is in the editor on
    let frameRequest = 0;

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
        follow();
        frame.dataset.rendered = String(number);
      } else {
        error.textContent = window.Api.describe(result.error);
        error.hidden = false;
      }
    }

    // A long body is not rendered with the page (docs/api.md §14): the preview asks for it once the page is up.
    if (body.dataset.deferred === "true") refresh();

    function schedule() {
      clearTimeout(timer);
      const now = Date.now();
      if (waitingSince === null) waitingSince = now;
      timer = setTimeout(refresh, Math.max(0, Math.min(DELAY, waitingSince + MAX_WAIT - now)));
    }

    /* The lines of the Markdown that start a heading (ATX "## x", also in a quote, or the text line over a
       setext "===" / "---"), outside fenced code: the publish renderer writes one <h1>-<h6> for each, in
       order, so the n-th of them is the n-th heading of the preview. */
    function headingLines(lines) {
      const found = [];
      let fence = null;
      lines.forEach((line, index) => {
        const mark = /^ {0,3}(`{3,}|~{3,})/.exec(line);
        if (fence) {
          if (mark && mark[1][0] === fence[0] && mark[1].length >= fence.length && !line.trim().slice(mark[1].length)) fence = null;
          return;
        }
        if (mark) { fence = mark[1]; return; }
        if (/^ {0,3}(?:> ?)* {0,3}#{1,6}(?:\s|$)/.test(line)) found.push(index);
        else if (/^ {0,3}(?:=+|-+)\s*$/.test(line) && index > 0 && lines[index - 1].trim()
                 && !/^ {0,3}(?:[-*+>#|]|\d+[.)])/.test(lines[index - 1]) && found[found.length - 1] !== index - 1) {
          found.push(index - 1);
        }
      });
      return found;
    }

    /* Scroll the frame to the part of the article around the caret's line: between the rendered headings of
       the sections the line sits between, in proportion to the lines (the article's top and end when it has
       no headings, or when they do not match up). The spot goes a third of the way down the frame. */
    function follow() {
      if (!following) return;
      cancelAnimationFrame(frameRequest);
      frameRequest = requestAnimationFrame(() => {
        const lines = editor.value.split("\n");
        const caret = editor.value.slice(0, editor.selectionStart).split("\n").length - 1;
        const marks = headingLines(lines);
        const headings = body.querySelectorAll("h1, h2, h3, h4, h5, h6");
        const origin = frame.getBoundingClientRect().top - frame.scrollTop;
        const at = (element) => element.getBoundingClientRect().top - origin;
        const points = [{ line: 0, y: at(body) }];
        if (headings.length >= marks.length) marks.forEach((line, n) => points.push({ line, y: at(headings[n]) }));
        points.push({ line: lines.length, y: at(body) + body.offsetHeight });
        let k = 0;
        while (k < points.length - 2 && points[k + 1].line <= caret) k += 1;
        const [from, to] = [points[k], points[k + 1]];
        const y = from.y + (to.y - from.y) * ((caret - from.line) / Math.max(1, to.line - from.line));
        frame.scrollTop = Math.max(0, y - frame.clientHeight / 3);
      });
    }

    const startFollowing = () => { following = true; follow(); };
    editor.addEventListener("focus", startFollowing);
    ["click", "keyup", "select"].forEach((kind) => editor.addEventListener(kind, follow));
    editor.addEventListener("input", schedule);
    theme.addEventListener("change", refresh);

    window.Preview = { refresh, schedule, follow };
  }
})();

/* Calls to the JSON API with the admin session cookie, and the API's errors shown in words
   next to the fields they concern (error.details keys are dotted paths, docs/api.md §2). */
(function () {
  "use strict";

  const FLASH_KEY = "review-flash";

  function sentence(text) {
    const clean = String(text || "").trim();
    if (!clean) return "";
    const first = clean.charAt(0).toUpperCase() + clean.slice(1);
    return /[.!?。！？）]$/.test(first) ? first : first + (/[\u3400-\u9fff]$/.test(first) ? "。" : ".");
  }

  const T = window.T;

  function networkError() {
    return { code: "network", message: T("network"), details: {}, said: true };
  }

  /* The API's message is English (docs/api.md §14): the page says what happened in its own language first
     (a sentence per error code), then the API's words, which carry the particulars. */
  function explain(status, error) {
    if (status === 401) return { ...error, message: T("session_ended"), said: true };
    if (status === 412) {
      // The details only carry the new version number, which tells the reader nothing more.
      return { ...error, message: T("stale"), details: {}, said: true };
    }
    return error;
  }

  /* An API error in the page's words: the code's sentence and the API's message (its particulars, in
     English), put together as the catalogue says: a Chinese page keeps the sentence alone (docs/api.md §14). */
  function describe(error) {
    if (!error) return "";
    if (error.said) return sentence(error.message);
    const own = T(window.Words.has(`error.${error.code}`) ? `error.${error.code}` : "error.http_error");
    const text = T("api.error", { sentence: own, message: sentence(error.message) });
    // The platform's errcode is a code, shown once in every language: it is what WeChat's documentation lists.
    const errcode = error.details && error.details.errcode;
    if (errcode === undefined || errcode === null || text.includes(String(errcode))) return text;
    return text + T("api.errcode", { errcode });
  }

  /* fetch() with JSON in and out (a FormData body goes as multipart). Resolves to
     {ok, status, data, response} or {ok: false, status, error}. */
  async function call(method, url, body, options = {}) {
    const headers = { Accept: "application/json" };
    const multipart = body instanceof FormData;
    if (body !== undefined && !multipart) headers["Content-Type"] = "application/json";
    if (options.ifMatch !== undefined && options.ifMatch !== null) headers["If-Match"] = `"${options.ifMatch}"`;
    let response;
    try {
      response = await fetch(url, {
        method, headers, credentials: "same-origin",
        body: body === undefined || multipart ? body : JSON.stringify(body),
      });
    } catch (err) {
      return { ok: false, status: 0, error: networkError() };
    }
    if (options.raw && response.ok) return { ok: true, status: response.status, response };
    const type = response.headers.get("Content-Type") || "";
    const data = type.includes("json") ? await response.json().catch(() => null) : null;
    if (response.ok) return { ok: true, status: response.status, data, response };
    const error = (data && data.error) || { code: "http_error", message: T("http_status", { status: response.status }), details: {}, said: true };
    return { ok: false, status: response.status, error: explain(response.status, error) };
  }

  function clearErrors(root) {
    root.querySelectorAll("[data-error-for]").forEach((slot) => { slot.hidden = true; slot.textContent = ""; });
    root.querySelectorAll("[aria-invalid]").forEach((el) => el.removeAttribute("aria-invalid"));
  }

  /* `said`: the messages are the page's own words; else the API's (English), worded as the catalogue says,
     or said in the page's language where the catalogue has each of them (a refused time's reason). */
  function placeError(root, key, messages, said) {
    const slot = root.querySelector(`[data-error-for="${CSS.escape(key)}"]`);
    if (!slot) return null;
    const own = !said && messages.length > 0 && messages.every((message) => window.Words.has(`api.reason.${message}`));
    const joined = (own ? messages.map((message) => T(`api.reason.${message}`)) : messages).map(sentence).join(" ");
    const text = said || own ? joined : T("api.field_error", { message: joined });
    slot.textContent = slot.textContent ? `${slot.textContent} ${text}` : text;
    slot.hidden = false;
    const field = slot.id && root.querySelector(`[aria-describedby~="${CSS.escape(slot.id)}"]`);
    if (field) field.setAttribute("aria-invalid", "true");
    return slot;
  }

  /* Each details path goes next to the field `fieldFor(path)` names; the rest goes into `summary`. */
  function showErrors(root, error, fieldFor, summary) {
    const unplaced = [];
    let first = null;
    Object.entries(error.details || {}).forEach(([path, messages]) => {
      const list = (Array.isArray(messages) ? messages : [messages]).map((m) => (typeof m === "string" ? m : JSON.stringify(m)));
      const key = fieldFor ? fieldFor(path) : path;
      const slot = key ? placeError(root, key, list, Boolean(error.said)) : null;
      if (slot) first = first || slot;
      else unplaced.push(error.said ? sentence(list.join(" ")) : T("api.other_error", { path, message: list.map(sentence).join(" ") }));
    });
    if (summary) {
      // Every particular shown beside its field: the summary says the code's sentence alone, not them again.
      const said = first && !unplaced.length && !error.said ? describe({ ...error, message: "" }).trim() : describe(error);
      summary.textContent = [said, ...unplaced].join(" ");
      summary.hidden = false;
    }
    const target = first ? first.closest("fieldset") || first : summary;
    if (target) target.scrollIntoView({ block: "center" });
  }

  function showMessage(el, text) {
    if (!el) return;
    el.textContent = sentence(text);
    el.hidden = false;
  }

  /* Messages shown on the next page (after a reload or a redirect): `text` as a notice, `failure`
     (optional) in the page's error banner so it is styled and announced as an error. */
  function flash(text, failure) {
    try { sessionStorage.setItem(FLASH_KEY, JSON.stringify({ text, failure })); } catch (err) { /* storage off: no message */ }
  }

  document.addEventListener("DOMContentLoaded", () => {
    let saved = null;
    try {
      const stored = sessionStorage.getItem(FLASH_KEY);
      sessionStorage.removeItem(FLASH_KEY);
      saved = JSON.parse(stored);
    } catch (err) { saved = null; } // storage off, or a message stored in another shape: none shown
    if (!saved) return;
    if (saved.text) showMessage(document.getElementById("page-message"), saved.text);
    if (saved.failure) showMessage(document.getElementById("page-error"), saved.failure);
  });

  window.Api = { call, clearErrors, showErrors, showMessage, sentence, describe, flash };
})();

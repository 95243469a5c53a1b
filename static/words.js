/* The page's language and time for its scripts (docs/api.md §14).
   - Messages: base.html hands them over as JSON, by key; T(key, {name: value}) fills %(name)s.
     A missing key shows itself, so a test can find it.
   - Times: every <time datetime="…UTC…"> shows the browser's own zone as YYYY-MM-DD HH:MM, with a
     relative hint beside it for the last week ("3 分钟前" / "3 min. ago"). The zone goes to the server
     in the review_tz cookie, so that the lists' date filters mean the viewer's days. */
(function () {
  "use strict";

  let table = {};
  try {
    table = JSON.parse(document.getElementById("page-words").textContent);
  } catch (err) { table = {}; }
  const language = document.documentElement.lang || "zh-CN";

  function T(key, params) {
    const text = Object.prototype.hasOwnProperty.call(table, key) ? table[key] : key;
    return text.replace(/%\((\w+)\)s/g, (whole, name) => (params && name in params ? String(params[name]) : whole));
  }

  const zone = (() => {
    try { return Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (err) { return ""; }
  })();
  if (zone) document.cookie = `review_tz=${encodeURIComponent(zone)}; path=/; max-age=31536000; samesite=lax`;

  const pad = (number) => String(number).padStart(2, "0");
  function localText(moment, dateOnly) {
    const day = `${moment.getFullYear()}-${pad(moment.getMonth() + 1)}-${pad(moment.getDate())}`;
    return dateOnly ? day : `${day} ${pad(moment.getHours())}:${pad(moment.getMinutes())}`;
  }

  const relativeFormat = window.Intl && Intl.RelativeTimeFormat
    ? new Intl.RelativeTimeFormat(language, { numeric: "auto", style: "short" }) : null;
  const UNITS = [["second", 60], ["minute", 60], ["hour", 24], ["day", 7]];

  /* "3 分钟前", "in 2 hr.", or null beyond a week (the date says it better then). */
  function relative(moment, now) {
    if (!relativeFormat) return null;
    let amount = (moment.getTime() - now) / 1000;
    for (const [unit, size] of UNITS) {
      if (Math.abs(amount) < size) return relativeFormat.format(Math.round(amount), unit);
      amount /= size;
    }
    return null;
  }

  function showTimes(root) {
    const now = Date.now();
    (root || document).querySelectorAll("time[datetime]").forEach((element) => {
      const moment = new Date(element.getAttribute("datetime"));
      if (Number.isNaN(moment.getTime())) return;
      const dateOnly = element.hasAttribute("data-date-only");
      element.textContent = localText(moment, dateOnly);
      if (zone) element.title = zone;
      if (dateOnly || element.hasAttribute("data-no-hint")) return;
      const hint = relative(moment, now);
      let slot = element.nextElementSibling;
      if (!slot || !slot.classList.contains("time-hint")) {
        if (!hint) return;
        slot = document.createElement("span");
        slot.className = "time-hint";
        element.after(slot);
      }
      slot.textContent = hint ? T("time.hint", { hint }) : "";
    });
  }

  showTimes(document);
  setInterval(() => showTimes(document), 60000);

  window.T = T;
  window.Words = { T, language, zone, has: (key) => key in table, showTimes, localText };
})();

/* The page's language for its scripts (CONTRACT §14): the messages base.html hands over as JSON, by key.
   T(key, {name: value}) fills %(name)s placeholders; a missing key shows itself, so a test can find it. */
(function () {
  "use strict";

  let table = {};
  try {
    table = JSON.parse(document.getElementById("page-words").textContent);
  } catch (err) { table = {}; }

  function T(key, params) {
    const text = Object.prototype.hasOwnProperty.call(table, key) ? table[key] : key;
    return text.replace(/%\((\w+)\)s/g, (whole, name) => (params && name in params ? String(params[name]) : whole));
  }

  window.T = T;
  window.Words = { T, language: document.documentElement.lang || "zh-CN", has: (key) => key in table };
})();

// The scenario upload form: a paste or file over the limit is refused here, before megabytes
// travel to the server and back. The server checks the same limit (forms.py), in the same words.
(function () {
  "use strict";

  // Two sizes that never read the same when they differ (yamlsource.describe_sizes).
  function describeSizes(size, limit) {
    const units = [["MiB", 1024 * 1024], ["KiB", 1024]];
    for (const [unit, scale] of units) {
      if (limit < scale) continue;
      for (const decimals of [1, 2, 3]) {
        const a = (size / scale).toFixed(decimals) + " " + unit;
        const b = (limit / scale).toFixed(decimals) + " " + unit;
        if ((a !== b) === (size !== limit)) return [a, b];
      }
      break;
    }
    return [size.toLocaleString("en") + " bytes", limit.toLocaleString("en") + " bytes"];
  }

  function check(form) {
    const limit = Number(form.dataset.maxBytes);
    const text = form.querySelector("textarea[name=text]");
    const file = form.querySelector("input[type=file][name=file]");
    const out = form.querySelector("[data-size-error]");
    let what = "";
    let size = 0;
    if (file && file.files && file.files.length && file.files[0].size > limit) {
      what = "The file";
      size = file.files[0].size;
    } else if (text) {
      size = new TextEncoder().encode(text.value.replace(/\r?\n/g, "\r\n")).length;
      if (size > limit) what = "The pasted text";
    }
    if (!out) return !what;
    out.hidden = !what;
    if (what) {
      const [shown, limitText] = describeSizes(size, limit);
      out.textContent = `${what} is ${shown}; the limit is ${limitText}.`;
    }
    return !what;
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.dataset.maxBytes && !check(form)) event.preventDefault();
  });
})();

// The policy editor's live checks: when the server will not run one (429 checked too often,
// 413 too big) it says why in a fragment for the problems box (HX-Retarget). htmx does not swap
// 4xx answers by default; these two are meant to be read, so they are swapped like a 200.
(function () {
  "use strict";
  const SHOWN = new Set([413, 429]);
  document.addEventListener("htmx:beforeSwap", (event) => {
    if (SHOWN.has(event.detail.xhr.status)) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();

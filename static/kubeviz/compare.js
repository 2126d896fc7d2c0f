// The comparison page's virtual-time scrubber. htmx does the talking (ws-connect, ws-send, hx-get);
// this keeps the slider on the shared clock and holds live updates back while you look at a past
// moment or a divergence, until "Back to live".
(function () {
  "use strict";

  function init() {
    var page = document.getElementById("compare-page");
    var scrub = document.getElementById("compare-scrub");
    if (!page || !scrub) return;
    var scrubbing = page.dataset.scrubbing === "1";

    function setScrubbing(on) {
      scrubbing = on;
      page.classList.toggle("is-scrubbing", on);
    }

    function sync() {
      var clock = document.getElementById("compare-clock");
      if (!clock) return;
      scrub.max = clock.dataset.endMs;
      if (document.activeElement !== scrub) scrub.value = clock.dataset.tMs;
      var done = clock.dataset.done === "1";
      page.classList.toggle("is-done", done);
      var live = document.getElementById("compare-live");
      if (live) live.textContent = done ? "Jump to the end" : "Back to live";
    }

    scrub.addEventListener("input", function () { setScrubbing(true); });
    document.getElementById("compare-live").addEventListener("click", function () { setScrubbing(false); });
    document.body.addEventListener("click", function (evt) {
      if (evt.target.closest && evt.target.closest(".div-jump")) setScrubbing(true);
    });

    // While a past moment is shown, drop live renders (control replies and the final summary still show).
    document.body.addEventListener("htmx:wsBeforeMessage", function (evt) {
      var message = evt.detail.message;
      if (scrubbing && message.indexOf('id="compare-control-message"') === -1 && message.indexOf('id="compare-results"') === -1) {
        evt.preventDefault();
      }
    });
    document.body.addEventListener("htmx:wsAfterMessage", sync);
    document.body.addEventListener("htmx:afterSettle", sync);
    document.body.addEventListener("htmx:afterRequest", sync);
    setScrubbing(scrubbing);
    sync();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

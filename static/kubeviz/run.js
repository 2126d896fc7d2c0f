// The run page's replay slider. htmx does the talking (ws-connect, ws-send, hx-get); this only
// keeps the slider in step with the live view and holds live updates back while you look at
// a past moment, until "Back to live".
(function () {
  "use strict";

  function init() {
    var page = document.getElementById("run-page");
    var scrub = document.getElementById("scrub-seq");
    if (!page || !scrub) return;
    var scrubbing = page.dataset.scrubbing === "1";

    function setScrubbing(on) {
      scrubbing = on;
      page.classList.toggle("is-scrubbing", on);
    }

    function sync() {
      var header = document.getElementById("run-header");
      if (!header) return;
      scrub.max = header.dataset.lastSeq;
      if (!scrubbing) scrub.value = header.dataset.seq;
      page.classList.toggle("is-done", header.dataset.done === "1");
      var live = document.getElementById("back-live");
      if (live && header.dataset.done === "1") live.textContent = "Jump to the end";
    }

    function nudge(delta) {
      var next = Math.min(Number(scrub.max), Math.max(Number(scrub.min), Number(scrub.value) + delta));
      if (String(next) === scrub.value) return;
      scrub.value = String(next);
      setScrubbing(true);
      scrub.dispatchEvent(new Event("input", { bubbles: true }));
    }

    scrub.addEventListener("input", function () { setScrubbing(true); });
    document.getElementById("scrub-prev").addEventListener("click", function () { nudge(-1); });
    document.getElementById("scrub-next").addEventListener("click", function () { nudge(1); });
    document.getElementById("back-live").addEventListener("click", function () { setScrubbing(false); });

    // While a past moment is shown, drop live renders; control replies still show.
    document.body.addEventListener("htmx:wsBeforeMessage", function (evt) {
      if (scrubbing && evt.detail.message.indexOf('id="run-control-message"') === -1) evt.preventDefault();
    });
    document.body.addEventListener("htmx:wsAfterMessage", sync);
    document.body.addEventListener("htmx:afterRequest", sync);
    document.body.addEventListener("htmx:afterSettle", sync);
    setScrubbing(scrubbing);
    sync();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();

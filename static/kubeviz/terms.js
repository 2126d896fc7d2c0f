// Glossary tooltips: a term ([data-term]) gets its definition as its title the first time the
// pointer or the keyboard reaches it. The definitions come once per page (#glossary-terms,
// kubeviz/web/templatetags/terms.py), not in every live fragment.
(function () {
  "use strict";
  var terms = null;
  function definitions() {
    if (terms === null) {
      var node = document.getElementById("glossary-terms");
      try { terms = node ? JSON.parse(node.textContent) : {}; } catch (e) { terms = {}; }
    }
    return terms;
  }
  function explain(evt) {
    var el = evt.target.closest && evt.target.closest("[data-term]");
    if (!el || el.hasAttribute("title")) return;
    var text = definitions()[el.dataset.term];
    if (text) el.setAttribute("title", text);
  }
  document.addEventListener("mouseover", explain);
  document.addEventListener("focusin", explain);
})();

// Glossary terms ([data-term]) on every page: the definition opens in a small box next to the
// term on a tap or click, on keyboard focus, and on hover; Escape, a tap elsewhere or moving on
// closes it. A hover-only tooltip (the title attribute) does nothing on a touch screen. A
// term that is a link to the glossary still goes there on a second tap, or from the box's
// own link. The definitions come once per page (#glossary-terms,
// kubeviz/web/templatetags/terms.py), not in every live fragment.
(function () {
  "use strict";
  var terms = null;
  var box = null;
  var owner = null;  // the term whose definition is open
  var hovered = false;  // opened by the pointer passing over: closes when it leaves
  var clicked = null;  // the term a click or tap opened: a second one follows its link

  function definitions() {
    if (terms === null) {
      var node = document.getElementById("glossary-terms");
      try { terms = node ? JSON.parse(node.textContent) : {}; } catch (e) { terms = {}; }
    }
    return terms;
  }
  function termOf(target) {
    return target && target.closest ? target.closest("[data-term]") : null;
  }
  function ensureBox() {
    if (box) return box;
    box = document.createElement("div");
    box.id = "term-box";
    box.className = "term-box";
    box.setAttribute("role", "tooltip");
    box.hidden = true;
    box.innerHTML = '<p class="term-text"></p><a class="term-more small" href="#">More in the glossary</a>';
    document.body.appendChild(box);
    return box;
  }
  function place(el) {
    var r = el.getBoundingClientRect();
    var width = Math.min(320, document.documentElement.clientWidth - 16);
    box.style.width = width + "px";
    var left = Math.max(8, Math.min(r.left, document.documentElement.clientWidth - width - 8));
    box.style.left = left + window.scrollX + "px";
    box.style.top = r.bottom + window.scrollY + 6 + "px";
    var below = r.bottom + 6 + box.offsetHeight;
    if (below > window.innerHeight && r.top - 6 - box.offsetHeight > 0) {
      box.style.top = r.top + window.scrollY - 6 - box.offsetHeight + "px";
    }
  }
  function show(el) {
    var text = definitions()[el.dataset.term];
    if (!text) return false;
    ensureBox();
    box.querySelector(".term-text").textContent = text;
    var more = box.querySelector(".term-more");
    more.href = el.getAttribute("href") || "/glossary/#" + el.dataset.term;
    if (owner && owner !== el) { owner.removeAttribute("aria-describedby"); owner.classList.remove("term-open"); clicked = null; }
    owner = el;
    el.setAttribute("aria-describedby", "term-box");
    el.classList.add("term-open");
    box.hidden = false;
    place(el);
    return true;
  }
  function hide() {
    if (!box || box.hidden) return;
    box.hidden = true;
    if (owner) { owner.removeAttribute("aria-describedby"); owner.classList.remove("term-open"); }
    owner = null;
    clicked = null;
  }
  // A term that is not focusable (a badge, a table head) becomes so, for the keyboard.
  function focusable(root) {
    (root || document).querySelectorAll("[data-term]:not(a):not([tabindex])").forEach(function (el) {
      el.setAttribute("tabindex", "0");
    });
  }

  document.addEventListener("click", function (evt) {
    var el = termOf(evt.target);
    if (el) {
      if (clicked === el && owner === el && !box.hidden) return;  // the second tap follows the link
      hovered = false;
      if (show(el)) { clicked = el; evt.preventDefault(); }
      return;
    }
    if (box && !box.contains(evt.target)) hide();
  });
  document.addEventListener("focusin", function (evt) {
    var el = termOf(evt.target);
    if (el) { hovered = false; show(el); }
    else if (!box || !box.contains(evt.target)) hide();
  });
  document.addEventListener("mouseover", function (evt) {
    var el = termOf(evt.target);
    if (el && el !== owner && show(el)) hovered = true;
  });
  document.addEventListener("mouseout", function (evt) {
    if (!hovered || !owner || termOf(evt.target) !== owner) return;
    var to = evt.relatedTarget;
    if (to && (owner.contains(to) || (box && box.contains(to)))) return;
    hovered = false;
    hide();
  });
  document.addEventListener("keydown", function (evt) { if (evt.key === "Escape") hide(); });
  window.addEventListener("resize", hide);
  document.addEventListener("DOMContentLoaded", function () { focusable(); });
  document.addEventListener("htmx:afterSettle", function (evt) { focusable(evt.target); });
  document.addEventListener("htmx:wsAfterMessage", function () { focusable(); });
})();

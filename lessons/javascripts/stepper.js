/* Step through a recorded pass (a "stepper" block, drawn at build time by
   book/stepper_view.py). Every step is already in the page, hidden but the
   current one; this script only shows one step at a time. The buttons and
   the left and right arrow keys move. The keys go to the stepper that has
   the focus, else to the last one used, else to the one in view. No
   network, no library: it works from file:// too. */
(function () {
  "use strict";
  var steppers = [];
  var lastUsed = null;

  function setUp(root) {
    var sections = root.querySelectorAll("section.fx-step");
    var prev = root.querySelector(".fx-prev");
    var next = root.querySelector(".fx-next");
    var count = root.querySelector(".fx-count b");
    var state = { root: root, current: 0, total: sections.length };

    state.show = function (index) {
      if (index < 0 || index >= sections.length) return;
      for (var i = 0; i < sections.length; i++) sections[i].hidden = i !== index;
      state.current = index;
      root.setAttribute("data-current", String(index));
      count.textContent = String(index + 1);
      prev.disabled = index === 0;
      next.disabled = index === sections.length - 1;
    };
    prev.addEventListener("click", function () { lastUsed = state; state.show(state.current - 1); });
    next.addEventListener("click", function () { lastUsed = state; state.show(state.current + 1); });
    root.addEventListener("focusin", function () { lastUsed = state; });
    state.show(0);
    return state;
  }

  function inView() {
    var best = null, bestArea = 0;
    for (var i = 0; i < steppers.length; i++) {
      var box = steppers[i].root.getBoundingClientRect();
      var seen = Math.min(box.bottom, window.innerHeight) - Math.max(box.top, 0);
      if (seen > bestArea) { best = steppers[i]; bestArea = seen; }
    }
    return best;
  }

  function onKey(event) {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var chosen = null;
    for (var i = 0; i < steppers.length; i++) {
      if (steppers[i].root.contains(document.activeElement)) chosen = steppers[i];
    }
    chosen = chosen || lastUsed || inView();
    if (!chosen) return;
    chosen.show(chosen.current + (event.key === "ArrowRight" ? 1 : -1));
    lastUsed = chosen;
    event.preventDefault();
  }

  function start() {
    var roots = document.querySelectorAll(".fx-stepper");
    for (var i = 0; i < roots.length; i++) steppers.push(setUp(roots[i]));
    if (steppers.length) document.addEventListener("keydown", onKey);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

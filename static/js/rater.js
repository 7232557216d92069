/* Rater page helpers: keys 1-5 pick a scale point, Enter submits, focus follows the new item.
   Works on the htmx-swapped item as well as on a full page load (no build step). */
(function () {
  "use strict";

  function typingInField(target) {
    if (!target) return false;
    var tag = target.tagName;
    return tag === "TEXTAREA" || (tag === "INPUT" && target.type !== "radio" && target.type !== "checkbox");
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var form = document.querySelector("form.judge-form");
    if (!form || typingInField(event.target)) return;
    if (event.key >= "1" && event.key <= "5") {
      var radios = form.querySelectorAll("input[name=choice]");
      var radio = radios[Number(event.key) - 1];
      if (radio) {
        radio.checked = true;
        radio.focus();
        event.preventDefault();
      }
    } else if (event.key === "Enter") {
      var button = event.target && event.target.tagName === "BUTTON";
      if (button) return;  // a focused button submits by itself
      event.preventDefault();
      if (typeof form.requestSubmit === "function") form.requestSubmit();
      else form.submit();
    }
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    var heading = document.getElementById("item-heading");
    if (heading && event.detail && event.detail.target && event.detail.target.id === "item-region") {
      heading.focus();
      window.scrollTo(0, 0);
    }
  });
})();

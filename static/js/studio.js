/* Studio helpers: copy buttons, and forms that show only the fields of the kind chosen. Without
   JavaScript the copy buttons stay hidden (the values sit in read-only fields to select and copy
   by hand) and every field shows, labelled with the kinds it is for. No inline scripts (CSP). */
(function () {
  "use strict";

  function announce(id, text) {
    var status = document.querySelector('[data-copy-status="' + id + '"]');
    if (status) status.textContent = text;
  }

  function selectText(field) {
    field.focus();
    field.select();
    field.setSelectionRange(0, field.value.length);
  }

  function copy(button) {
    var id = button.getAttribute("data-copy");
    var field = document.getElementById(id);
    if (!field) return;
    var fallback = function () {
      selectText(field);
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      announce(id, ok ? "Copied." : "Selected: press Ctrl+C (or Cmd+C) to copy.");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(function () {
        announce(id, "Copied.");
      }, fallback);
    } else {
      fallback();
    }
  }

  /* A form whose parts belong to some kinds only (data-kinds="judge label"): show the parts of
     the kind chosen in its data-kind-field select, and leave the others out of what is sent. */
  function kindParts(form) {
    var select = document.getElementById(form.getAttribute("data-kind-field"));
    if (!select) return;
    var update = function () {
      var parts = form.querySelectorAll("[data-kinds]");
      for (var i = 0; i < parts.length; i++) {
        var on = parts[i].getAttribute("data-kinds").split(" ").indexOf(select.value) >= 0;
        parts[i].hidden = !on;
        var inputs = parts[i].querySelectorAll("input, select, textarea");
        for (var j = 0; j < inputs.length; j++) inputs[j].disabled = !on;
      }
    };
    select.addEventListener("change", update);
    update();
  }

  function setUp() {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].hidden = false;
      buttons[i].addEventListener("click", function (event) { copy(event.currentTarget); });
    }
    var forms = document.querySelectorAll("form[data-kind-field]");
    for (var k = 0; k < forms.length; k++) kindParts(forms[k]);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setUp);
  else setUp();
})();

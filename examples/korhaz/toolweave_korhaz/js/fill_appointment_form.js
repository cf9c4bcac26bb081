// Client implementation of the AI tool "fill_appointment_form" (scope CLIENT).
// The page loads this script; it fills the appointment-request form
// (#appointment-department, #appointment-day) and returns JSON for the model.
AiTools.register("fill_appointment_form", {
  execute: function (input) {
    var data = JSON.parse(input);
    var filled = {};
    var missing = [];
    function norm(text) {
      return String(text || "").normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim();
    }
    function fill(id, value) {
      var field = document.getElementById(id);
      if (!field) { missing.push(id); return null; }
      if (value === undefined || value === null || value === "") { return null; }
      if (field.tagName === "SELECT") {
        var wanted = norm(value);
        var options = Array.prototype.slice.call(field.options);
        var match = options.find(function (o) { return norm(o.value) === wanted || norm(o.text) === wanted; })
          || options.find(function (o) {
            return wanted && (norm(o.text).indexOf(wanted) >= 0 || wanted.indexOf(norm(o.text)) >= 0
              || norm(o.value).indexOf(wanted) >= 0 || wanted.indexOf(norm(o.value)) >= 0);
          });
        if (!match) { return null; }
        field.value = match.value;
      } else {
        field.value = value;
      }
      field.dispatchEvent(new Event("input", { bubbles: true }));
      field.dispatchEvent(new Event("change", { bubbles: true }));
      return field.value;
    }
    filled.department = fill("appointment-department", data.department);
    filled.day = fill("appointment-day", data.day);
    if (missing.length) {
      return JSON.stringify({ filled: false, error: "the page has no appointment form", missing: missing });
    }
    return JSON.stringify({ filled: true, department: filled.department, day: filled.day });
  }
});

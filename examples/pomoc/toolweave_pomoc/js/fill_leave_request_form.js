// Client implementation of the AI tool "fill_leave_request_form" (scope CLIENT).
// The page loads this script; it fills form HR-01 (#leave-start, #leave-end,
// #leave-type) and returns JSON for the model.
AiTools.register("fill_leave_request_form", {
  execute: function (input) {
    var data = JSON.parse(input || "{}");
    var ids = { start_date: "leave-start", end_date: "leave-end", leave_type: "leave-type" };
    var filled = { filled: true };
    var missing = [];
    Object.keys(ids).forEach(function (key) {
      var field = document.getElementById(ids[key]);
      if (!field) { missing.push(ids[key]); return; }
      if (data[key] === undefined || data[key] === null || data[key] === "") { return; }
      field.value = data[key];
      field.dispatchEvent(new Event("input", { bubbles: true }));
      field.dispatchEvent(new Event("change", { bubbles: true }));
      filled[key] = field.value;
    });
    if (missing.length) {
      return JSON.stringify({ filled: false, error: "the page has no leave request form", missing: missing });
    }
    if (Object.keys(filled).length === 1) {
      return JSON.stringify({ filled: false, error: "no dates or leave type were given" });
    }
    return JSON.stringify(filled);
  }
});

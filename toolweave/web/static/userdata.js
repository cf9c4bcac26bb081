/*
 * toolweave chat page: the person's data sent with every run (N3), never stored.
 *
 * Two sources, merged (the page's fields win):
 *   - the server's, per request: ChatPage(user_data=lambda request: {...}) puts it in
 *     the page's config block ("userData");
 *   - the side panel's fields marked data-user-data: <input data-user-data="member_id">
 *     (the attribute's value is the key, else the field's name); an empty text field
 *     is left out, a checkbox gives true or false.
 * The chat page sends them as the run's context, {"user_data": {...}, "secret_keys":
 * [...every key]}: the gates and the tools get them, the checkpoints never do, and
 * toolweave redacts their values from its logs and progress events (X4).
 */
(function (root) {
  "use strict";

  function fieldValue(field) {
    if (field.type === "checkbox") return { ok: true, value: !!field.checked };
    const text = String(field.value == null ? "" : field.value).trim();
    return { ok: text !== "", value: text };
  }

  /** The user data to send: the server's, then the marked fields'; null when there is none. */
  function collect(doc, configured) {
    const data = {};
    if (configured && typeof configured === "object" && !Array.isArray(configured)) {
      Object.assign(data, configured);
    }
    const fields = doc && doc.querySelectorAll ? doc.querySelectorAll("[data-user-data]") : [];
    for (const field of fields) {
      const key = (field.getAttribute && field.getAttribute("data-user-data")) || field.name;
      if (!key) continue;
      const read = fieldValue(field);
      if (read.ok) data[key] = read.value;
    }
    return Object.keys(data).length ? data : null;
  }

  /** The run's context for the LangGraph API, or null when there is no user data. */
  function runContext(doc, configured) {
    const data = collect(doc, configured);
    return data ? { user_data: data, secret_keys: Object.keys(data) } : null;
  }

  root.ToolweaveUserData = { collect: collect, runContext: runContext };
})(typeof window !== "undefined" ? window : globalThis);

/*
 * AiTools: the page's registry of client-side AI system tool implementations (W4).
 *
 *   AiTools.register("example-tool", {
 *     execute(input, context) {   // input: the JSON text the model produced
 *       const args = JSON.parse(input);
 *       return "done";            // a string, any JSON-able value, or a Promise of one
 *     }
 *   });
 *
 * `context.callId` is the server's id of the call: a tool with an effect outside the
 * page dedupes on it. A call that finished is not run again in the same tab: after a
 * reload before its result reached the server, `runCall` answers with the stored
 * result (sessionStorage), so the page does not act twice (S5, Q6).
 *
 * `PW.AiTools` is the same object (the seed's spelling). The chat page announces
 * `AiTools.ids()` in each run's input (`client_tools`) and answers the server's
 * `client_tool_calls` pauses with `AiTools.runCall(call, timeoutMs)`.
 *
 * Each tool's script is its own file (W7): one that does not parse, throws, or
 * never registers is recorded by `AiTools.failed` / `AiTools.settle` and only its
 * tool is missing from `ids()`; the others run.
 * No dependencies; works on any page.
 */
(function (global) {
  "use strict";

  const registry = new Map();
  const failures = new Map(); // tool id -> why its script failed (W7)
  const DONE_KEY = "toolweave:client-results"; // sessionStorage: outputs by call id (S5, Q6)
  const MAX_DONE = 50; // the latest calls kept; an older one is long answered

  function doneOutputs() {
    try {
      const stored = JSON.parse(global.sessionStorage.getItem(DONE_KEY) || "{}");
      return stored && typeof stored === "object" ? stored : {};
    } catch (_) {
      return {}; // no storage (a private window, a blocked cookie policy): runs as before
    }
  }

  function rememberOutput(callId, output) {
    if (!callId) return;
    try {
      const done = doneOutputs();
      delete done[callId]; // re-added last: the oldest go first
      done[callId] = output;
      const ids = Object.keys(done);
      for (const id of ids.slice(0, Math.max(0, ids.length - MAX_DONE))) delete done[id];
      global.sessionStorage.setItem(DONE_KEY, JSON.stringify(done));
    } catch (_) {
      // no storage: a reload before the result is sent runs the call again
    }
  }
  let loading = true; // until settle(): errors of tool scripts count as their failure

  // A tool script that does not parse (or throws outside its guard) fails alone:
  // the error names its file, <...>/tools/<id>.js.
  global.addEventListener("error", (event) => {
    const found = loading && /\/tools\/([^/?#]+)\.js(?:[?#].*)?$/.exec(event.filename || "");
    if (found) AiTools.failed(decodeURIComponent(found[1]), event.error || event.message);
  });

  function describeError(err) {
    if (err instanceof Error) return err.message || err.name;
    if (typeof err === "string") return err;
    try {
      return JSON.stringify(err);
    } catch (_) {
      return String(err);
    }
  }

  function asOutputText(value) {
    if (typeof value === "string") return value;
    if (value === undefined) return "";
    return JSON.stringify(value);
  }

  const AiTools = {
    /** Default client-side time limit of one call, in milliseconds. */
    timeoutMs: 30000,

    /** Register (or replace) the implementation of the tool `id`. */
    register(id, implementation) {
      if (typeof id !== "string" || id.trim() === "") {
        throw new TypeError("AiTools.register: the tool id must be a non-empty string");
      }
      if (!implementation || typeof implementation.execute !== "function") {
        throw new TypeError(
          'AiTools.register("' + id + '"): the implementation needs an execute(input) function'
        );
      }
      if (registry.has(id)) {
        console.warn('AiTools: "' + id + '" was registered again; the last registration wins');
      }
      registry.set(id, implementation);
      return AiTools;
    },

    /** Remove the implementation of `id`; true when there was one. */
    unregister(id) {
      return registry.delete(id);
    },

    /** Whether `id` has an implementation on this page. */
    has(id) {
      return registry.has(id);
    },

    /** The registered tool ids, in registration order. */
    ids() {
      return Array.from(registry.keys());
    },

    /** Record that the script of `id` failed (W7): its tool is disabled, the others run. */
    failed(id, err) {
      registry.delete(id);
      if (!failures.has(id)) failures.set(id, describeError(err));
    },

    /**
     * After the tool scripts ran: every expected id that did not register counts as
     * failed. Returns the failures as [{tool_id, error}] (each reported once by the page).
     */
    settle(expected) {
      loading = false;
      for (const id of expected || []) {
        if (!registry.has(id) && !failures.has(id)) {
          failures.set(id, "its script did not register the tool");
        }
      }
      return Array.from(failures, ([id, error]) => ({ tool_id: id, error: error }));
    },

    /**
     * Run one call of a `client_tool_calls` pause: {call_id, tool_id, input}.
     * Resolves (never rejects) to {call_id, output} or {call_id, error}; a call
     * that takes longer than `timeoutMs` resolves to an error result. A call this tab
     * already finished is not run again: its stored output is the result (S5, Q6).
     */
    async runCall(call, timeoutMs) {
      const callId = call && typeof call.call_id === "string" ? call.call_id : "";
      const toolId = call && call.tool_id;
      const done = doneOutputs();
      if (callId && Object.prototype.hasOwnProperty.call(done, callId)) {
        return { call_id: callId, output: done[callId] };
      }
      const implementation = registry.get(toolId);
      if (!implementation) {
        return {
          call_id: callId,
          error: 'no implementation of the client tool "' + toolId + '" on this page',
        };
      }
      const limit = Number(timeoutMs) > 0 ? Number(timeoutMs) : AiTools.timeoutMs;
      let timer = null;
      const expired = new Promise((resolve) => {
        timer = setTimeout(
          () =>
            resolve({
              call_id: callId,
              error: 'the client tool "' + toolId + '" did not answer within ' + limit + " ms",
            }),
          limit
        );
      });
      const ran = Promise.resolve()
        .then(() => implementation.execute(call.input, { callId: callId }))
        .then((value) => {
          const output = asOutputText(value);
          rememberOutput(callId, output); // even past the time limit: it was done
          return { call_id: callId, output: output };
        })
        .catch((err) => ({
          call_id: callId,
          error: 'the client tool "' + toolId + '" failed: ' + describeError(err),
        }));
      try {
        return await Promise.race([ran, expired]);
      } finally {
        clearTimeout(timer);
      }
    },
  };

  global.AiTools = AiTools;
  global.PW = global.PW || {};
  global.PW.AiTools = AiTools;
})(window);

/*
 * toolweave chat page: talks to the LangGraph server's own API with fetch and a
 * streaming reader (threads, runs, SSE). Shows the answer token by token, the
 * tools' progress events, clarification questions with their choices, the
 * answer's sources, and runs client tools registered with AiTools.register.
 *
 * Protocol (see the README, "The web chat page"):
 *   POST /threads                          -> a thread id (kept in ?thread= and this tab's
 *                                             sessionStorage; localStorage lists the
 *                                             conversations by first question and time)
 *   POST /threads/{id}/runs/stream         -> SSE: metadata, messages, custom, error
 *   GET  /threads/{id}/state               -> the answer, documents and pending interrupts
 *   interrupt "clarification"              -> buttons; a click resumes with the choice; typed
 *                                             text resumes as {type: "message", content}: the
 *                                             graph reads it as the thread's next message
 *   interrupt "client_tool_calls"          -> AiTools.runCall per call; resume with
 *                                             {type: "client_tool_results", results: [...]}
 */
(function () {
  "use strict";

  const ANSWER_TAG = "toolweave:answer";
  const MESSAGE_SOURCES = "toolweave_sources"; // an answer message's own sources (R9, MESSAGE_SOURCES_KEY)
  const MESSAGE_SENTENCES = "toolweave_sentences"; // its sentences citing them, with quotes (MESSAGE_SENTENCES_KEY)
  const MESSAGE_SNIPPETS = "toolweave_snippets"; // its uncited sources' first passages (MESSAGE_SNIPPETS_KEY)
  const STREAM_MODES = ["messages-tuple", "custom"];
  const MAX_ROUNDS = 25; // client-tool answers and resumes in one turn, at most
  const HEALTH_INTERVAL_MS = 3000;
  const MAX_HEALTH_CHECKS = 200; // about ten minutes, then the page stops asking
  const SNIPPET_CHARS = 180;
  const QUOTE_CHARS = 400; // a supporting sentence is shown whole, unless it is a page's run-on line
  const ACTIVE = ["pending", "running"]; // run statuses worth following after a reload

  // ---------------------------------------------------------------- config

  function readJson(id) {
    const node = document.getElementById(id);
    if (!node) return {};
    try {
      return JSON.parse(node.textContent || "{}");
    } catch (_) {
      return {};
    }
  }

  const config = readJson("toolweave-config");

  // ---------------------------------------------------------------- the page's own strings

  // By language, then key (toolweave/web/static/strings.json and ChatPage.strings).
  const strings = readJson("toolweave-strings");
  const FALLBACK_LANG = "en";

  /**
   * The language of the page's own strings: the first of the browser's languages
   * that has a table, else the server's (the domain's language), else English.
   */
  function pickLanguage(browser, server, tables) {
    const has = (lang) => !!lang && Object.prototype.hasOwnProperty.call(tables, lang);
    for (const wanted of browser) {
      const tag = String(wanted || "").toLowerCase();
      if (has(tag)) return tag;
      if (has(tag.split("-")[0])) return tag.split("-")[0];
    }
    const own = String(server || "").toLowerCase();
    return has(own) ? own : FALLBACK_LANG;
  }

  const browserLanguages = Array.isArray(navigator.languages) && navigator.languages.length
    ? navigator.languages
    : [navigator.language];
  const lang = pickLanguage(browserLanguages, config.lang, strings);

  /** One of the page's strings in its language (English when that table lacks it). */
  function t(key, values) {
    const table = strings[lang] || {};
    const english = strings[FALLBACK_LANG] || {};
    const text = String(table[key] || english[key] || key);
    return text.replace(/\{(\w+)\}/g, (whole, name) =>
      values && name in values ? String(values[name]) : whole
    );
  }

  function translatePage() {
    document.documentElement.lang = lang;
    for (const item of document.querySelectorAll("[data-i18n]")) item.textContent = t(item.dataset.i18n);
    for (const item of document.querySelectorAll("[data-i18n-placeholder]")) {
      item.placeholder = t(item.dataset.i18nPlaceholder);
    }
    for (const item of document.querySelectorAll("[data-i18n-aria-label]")) {
      item.setAttribute("aria-label", t(item.dataset.i18nAriaLabel));
    }
  }

  translatePage();
  // How the page answers each pause kind (the server's list, Q7): "question" or "client_tools".
  const pauseHandling = Object.assign(
    { clarification: "question", client_tool_calls: "client_tools" },
    readJson("toolweave-pauses")
  );
  const handledAs = (intr) => (intr.value && pauseHandling[intr.value.type]) || null;
  const params = new URLSearchParams(window.location.search);
  const assistantId = params.get("assistant") || config.assistantId || "agent";
  const apiBase = String(config.apiUrl || "").replace(/\/+$/, "");
  const clientToolTimeoutMs =
    Number(params.get("client_timeout_ms")) || Number(config.clientToolTimeoutMs) || 30000;
  const tabKey = "toolweave:thread:" + assistantId; // sessionStorage: this tab's conversation
  const listKey = "toolweave:threads:" + assistantId; // localStorage: every tab's conversations
  const MAX_LISTED = 20;
  const TITLE_CHARS = 60;
  // the page's client tools: id -> what people call the tool (P4: lines say that, not the id)
  const clientTools = config.clientTools && typeof config.clientTools === "object" ? config.clientTools : {};
  const expectedTools = Object.keys(clientTools);
  const toolTitle = (id) => String(clientTools[id] || id);
  const pageUrl = String(config.pageUrl || "");

  const el = {
    log: document.getElementById("log"),
    empty: document.getElementById("empty-hint"),
    composer: document.getElementById("composer"),
    input: document.getElementById("composer-input"),
    send: document.getElementById("send"),
    banner: document.getElementById("banner"),
    busy: document.getElementById("busy"),
    threadLabel: document.getElementById("thread-label"),
    newThread: document.getElementById("new-thread"),
    threads: document.getElementById("threads"),
    threadsBox: document.getElementById("threads-box"),
    toolNotes: document.getElementById("tool-notes"),
    panel: document.getElementById("panel"),
  };

  let threadId = null;
  let busy = false;
  let openQuestion = null; // {interrupts, interrupt, node} while a clarification waits
  let pendingTitle = ""; // the question that starts a new conversation: its title

  // ---------------------------------------------------------------- errors

  class ServerUnreachable extends Error {
    constructor() {
      super("server unreachable");
      this.name = "ServerUnreachable";
    }
  }

  class ApiError extends Error {
    constructor(status, detail) {
      super("HTTP " + status + (detail ? ": " + detail : ""));
      this.name = "ApiError";
      this.status = status;
      this.detail = detail;
    }
  }

  function serverLabel() {
    return apiBase ? apiBase : window.location.origin;
  }

  // ---------------------------------------------------------------- HTTP

  async function request(method, path, body) {
    const init = { method: method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(apiBase + path, init);
    } catch (_) {
      throw new ServerUnreachable();
    }
    if (response.status >= 502 && response.status <= 504) throw new ServerUnreachable();
    if (!response.ok) throw await apiError(response);
    return response;
  }

  async function apiError(response) {
    let detail = "";
    try {
      const data = await response.json();
      const raw = data.detail !== undefined ? data.detail : data.message || data.error || data;
      detail = typeof raw === "string" ? raw : JSON.stringify(raw);
    } catch (_) {
      detail = response.statusText || "";
    }
    return new ApiError(response.status, detail);
  }

  async function getJson(path) {
    const response = await request("GET", path);
    return response.json();
  }

  /** Server-sent events of a fetch response, as {event, data} (data parsed as JSON). */
  async function* readEvents(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let carry = "";
    let buffer = "";
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (_) {
        throw new ServerUnreachable();
      }
      if (chunk.done) break;
      let text = carry + decoder.decode(chunk.value, { stream: true });
      carry = "";
      if (text.endsWith("\r")) {
        carry = "\r"; // maybe half of a "\r\n": decide with the next chunk
        text = text.slice(0, -1);
      }
      buffer += text.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const parsed = parseEvent(buffer.slice(0, cut));
        buffer = buffer.slice(cut + 2);
        if (parsed) yield parsed;
      }
    }
    const last = parseEvent((buffer + carry).replace(/\r\n?/g, "\n").trim());
    if (last) yield last;
  }

  function parseEvent(block) {
    let name = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    if (data.length === 0) return null;
    const text = data.join("\n");
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch (_) {
      // not JSON: keep the text
    }
    return { event: name.split("|")[0], data: parsed };
  }

  // ---------------------------------------------------------------- banner / health

  let healthTimer = null;

  function showBanner(text, kind) {
    el.banner.textContent = text;
    el.banner.dataset.kind = kind || "error";
    el.banner.hidden = false;
  }

  function hideBanner() {
    el.banner.hidden = true;
    el.banner.textContent = "";
  }

  function unreachable() {
    showBanner(
      t("unreachable"),
      "offline"
    );
    console.error(
      "toolweave chat: the LangGraph API at " + serverLabel() + " does not answer " +
        "(is `langgraph dev` or your LangGraph server running?); checking /ok every " +
        HEALTH_INTERVAL_MS / 1000 + " s"
    );
    document.body.classList.add("offline");
    watchHealth();
  }

  function watchHealth() {
    if (healthTimer !== null) return;
    let checks = 0;
    healthTimer = setInterval(async () => {
      checks += 1;
      try {
        const response = await fetch(apiBase + "/ok", { cache: "no-store" });
        if (response.ok) {
          stopHealth();
          document.body.classList.remove("offline");
          showBanner(t("reconnected"), "info");
          setTimeout(() => {
            if (el.banner.dataset.kind === "info") hideBanner();
          }, 4000);
          return;
        }
      } catch (_) {
        // still down
      }
      if (checks >= MAX_HEALTH_CHECKS) stopHealth();
    }, HEALTH_INTERVAL_MS);
  }

  function stopHealth() {
    if (healthTimer !== null) clearInterval(healthTimer);
    healthTimer = null;
  }

  // ---------------------------------------------------------------- thread id

  function stored(storage, key, fallback) {
    try {
      const raw = window[storage].getItem(key);
      return raw === null ? fallback : JSON.parse(raw);
    } catch (_) {
      return fallback; // storage disabled or garbled: the URL still carries the thread
    }
  }

  function store(storage, key, value) {
    try {
      if (value === null) window[storage].removeItem(key);
      else window[storage].setItem(key, JSON.stringify(value));
    } catch (_) {
      // storage may be disabled
    }
  }

  /** The conversations of this browser, newest first: [{id, title, at}]. */
  function listed() {
    const list = stored("localStorage", listKey, []);
    return Array.isArray(list) ? list.filter((t) => t && typeof t.id === "string") : [];
  }

  /** Put a conversation on the list (its title is its first question), or take it off. */
  function listThread(id, title, drop) {
    const list = listed();
    const old = list.find((t) => t.id === id);
    const rest = list.filter((t) => t.id !== id);
    if (!drop) {
      const entry = old || { id: id, title: "", at: Date.now() };
      if (!entry.title && title) entry.title = shorten(title, TITLE_CHARS);
      rest.unshift(entry);
    }
    store("localStorage", listKey, rest.slice(0, MAX_LISTED));
    showThreads();
  }

  function when(at) {
    const date = new Date(Number(at) || Date.now());
    const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    const today = date.toDateString() === new Date().toDateString();
    return today ? time : date.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + time;
  }

  function labelOf(entry) {
    return (entry.title || t("untitled")) + " · " + when(entry.at);
  }

  function showThreads() {
    const list = listed();
    el.threads.replaceChildren();
    for (const entry of list) {
      const link = node("a", "", labelOf(entry));
      const url = new URL(window.location.href);
      url.searchParams.set("thread", entry.id);
      link.href = url.pathname + url.search; // opening it joins that conversation on purpose
      if (entry.id === threadId) link.setAttribute("aria-current", "page");
      const item = node("li");
      item.appendChild(link);
      el.threads.appendChild(item);
    }
    el.threadsBox.hidden = list.length === 0;
    const current = list.find((t) => t.id === threadId);
    el.threadLabel.textContent = current ? labelOf(current) : "";
  }

  function rememberThread(id) {
    threadId = id;
    const url = new URL(window.location.href);
    if (id) url.searchParams.set("thread", id);
    else url.searchParams.delete("thread");
    window.history.replaceState(null, "", url.toString());
    store("sessionStorage", tabKey, id); // this tab only: another tab has its own
    document.body.dataset.thread = id || "";
    showThreads();
  }

  function savedThread() {
    return params.get("thread") || stored("sessionStorage", tabKey, null);
  }

  async function ensureThread() {
    if (threadId) return threadId;
    const response = await request("POST", "/threads", { metadata: { source: "toolweave-chat" } });
    const thread = await response.json();
    rememberThread(thread.thread_id);
    listThread(thread.thread_id, pendingTitle);
    return threadId;
  }

  // ---------------------------------------------------------------- rendering

  function node(tag, className, text) {
    const item = document.createElement(tag);
    if (className) item.className = className;
    if (text !== undefined) item.textContent = text;
    return item;
  }

  function scrollDown() {
    el.log.scrollTop = el.log.scrollHeight;
  }

  function addUserMessage(text) {
    el.empty.remove();
    const item = node("div", "msg user");
    item.appendChild(node("span", "sr-only", t("you")));
    item.appendChild(node("div", "text", text));
    el.log.appendChild(item);
    scrollDown();
    return item;
  }

  class Turn {
    constructor() {
      el.empty.remove();
      this.item = node("div", "msg bot");
      this.item.appendChild(node("span", "sr-only", t("assistant")));
      this.progress = node("ul", "progress");
      this.progress.setAttribute("aria-label", t("progress"));
      this.answer = node("div", "text answer");
      this.extra = node("div", "extra");
      this.item.append(this.progress, this.answer, this.extra);
      this.streamed = new Set();
      this.text = "";
      this.failed = false;
      this.answered = new Set(); // call ids this turn has sent results for
      this.reading = null; // the last page a search reads, and its line (addEvent)
      el.log.appendChild(this.item);
      scrollDown();
    }

    setBusy(on) {
      this.item.setAttribute("aria-busy", on ? "true" : "false");
      this.item.classList.toggle("working", on);
    }

    addProgress(line, kind) {
      if (!line) return;
      const entry = node("li", kind ? "line " + kind : "line", line);
      this.progress.appendChild(entry);
      scrollDown();
    }

    /**
     * One line per page a search reads (P4): the page's outcome ("“Fees” (2/6): found
     * an answer") takes the place of its reading's line; other events get their own.
     */
    addEvent(event) {
      const line = progressLine(event);
      const reading = this.reading;
      this.reading = null;
      if (line && reading && isPageOutcome(event, reading.event)) {
        reading.entry.textContent = line;
        return;
      }
      this.addProgress(line);
      if (line && isToolEvent(event, "READING_PAGE")) {
        this.reading = { event, entry: this.progress.lastElementChild };
      }
    }

    appendAnswer(text) {
      if (!text) return;
      this.text += text;
      this.answer.textContent = withoutMarkers(this.text);
      scrollDown();
    }

    setAnswer(text) {
      this.text = text || "";
      this.answer.textContent = this.text;
      scrollDown();
    }

    note(text, kind) {
      const entry = node("p", "note " + (kind || ""), text);
      this.extra.appendChild(entry);
      scrollDown();
      return entry;
    }

    showSources(values) {
      const rows = sourceRows(values);
      const old = this.extra.querySelector(".sources");
      if (old) old.remove();
      if (rows.length === 0) return;
      const box = node("section", "sources");
      box.setAttribute("aria-label", t("sources"));
      box.appendChild(node("h3", "", t("sources")));
      const list = node("ol");
      this.citeKey = this.citeKey || "c" + Math.random().toString(36).slice(2, 8);
      for (const [at, row] of rows.entries()) {
        const entry = node("li", "source");
        entry.id = this.citeKey + "-" + (at + 1); // what the answer's [n] links point at
        const title = row.url ? node("a", "doc", row.name) : node("span", "doc", row.name);
        if (row.url) {
          title.href = row.url;
          title.rel = "noopener noreferrer";
          title.target = "_blank";
        }
        entry.appendChild(title);
        if (row.pages.length) entry.appendChild(node("span", "page", t("pages", { pages: row.pages.join(", ") })));
        for (const quote of row.quotes) entry.appendChild(node("q", "snippet", quote));
        list.appendChild(entry);
      }
      box.appendChild(list);
      this.extra.appendChild(box);
      this.showCitations(values);
      scrollDown();
    }

    /**
     * R9: the answer as its checked sentences, each followed by links to its sources in
     * the list below ([1] is the list's first entry); never a model's raw marker.
     */
    showCitations(values) {
      const said = (Array.isArray(values.answer_sentences) ? values.answer_sentences : [])
        .filter((s) => s && s.supported && typeof s.text === "string");
      if (!said.some((s) => Array.isArray(s.sources) && s.sources.length)) return;
      this.answer.textContent = "";
      const gaps = separators(said, values.answer);
      said.forEach((sentence, at) => {
        this.answer.append(gaps[at] + sentence.text);
        (sentence.sources || []).forEach((n, which) => {
          const link = node("a", "cite", "[" + n + "]");
          link.href = "#" + this.citeKey + "-" + n;
          const quote = quoteOf(sentence, which);
          if (quote) link.title = quote; // what source n says for this sentence
          const sup = node("sup");
          sup.appendChild(link);
          this.answer.append(" ", sup);
        });
      });
    }
  }

  /**
   * Streamed answer text as a person reads it (R9): no citation marker ("[3]", "[1, 2]"),
   * nor the spaces before one; a marker still open at the end ("… 8-16 [1") waits for
   * what follows. The links come with the stored answer's sentences (showCitations).
   */
  function withoutMarkers(text) {
    return String(text || "")
      .replace(/[ \t]*\[\s*\d+(?:\s*[,;]\s*\d+)*\s*\]/g, "")
      .replace(/[ \t]*\[[\d,;\s]*$/, "");
  }

  function textOf(content) {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content
        .map((part) => (typeof part === "string" ? part : part && part.text ? part.text : ""))
        .join("");
    }
    return "";
  }

  function shorten(text, width) {
    const flat = String(text || "").split(/\s+/).join(" ").trim();
    return flat.length <= width ? flat : flat.slice(0, width - 1).trimEnd() + "…";
  }

  /**
   * What goes before each sentence when the page writes the answer anew with its links:
   * the answer's own line break where the stored answer has one (the lines the person
   * saw stream), else a space ("" before the first).
   */
  function separators(said, answer) {
    const text = typeof answer === "string" ? answer : "";
    let from = 0;
    return said.map((sentence, at) => {
      const found = text.indexOf(sentence.text, from);
      const gap = found < 0 ? "" : text.slice(from, found);
      if (found >= 0) from = found + sentence.text.length;
      if (at === 0) return "";
      return gap.includes("\n") ? "\n" : " ";
    });
  }

  /** Whether two texts are the same words (case and spacing aside). */
  function sameWords(one, other) {
    const words = (text) => String(text || "").toLowerCase().split(/\s+/).filter(Boolean).join(" ");
    return words(one) === words(other);
  }

  /** The sentence of a sentence's `which`-th source that supports it (R9), or "". */
  function quoteOf(sentence, which) {
    const quotes = Array.isArray(sentence.quotes) ? sentence.quotes : [];
    const sources = Array.isArray(sentence.sources) ? sentence.sources : [];
    const quote = quotes.length === sources.length ? quotes[which] : "";
    return typeof quote === "string" ? shorten(quote, QUOTE_CHARS) : "";
  }

  /**
   * What source `number` (1-based) says for the answer: the sentences of it that the
   * check found supporting the answer's sentences citing it (their `quotes`, chosen by
   * the library, R9), once each, in answer order; `null` when no sentence cites it. A
   * quote that is its answer sentence word for word is left out: the person reads it
   * in the answer, linked to this source.
   */
  function sourceQuotes(values, number) {
    const said = Array.isArray(values.answer_sentences) ? values.answer_sentences : [];
    const citing = said.filter(
      (s) => s && s.supported && Array.isArray(s.sources) && s.sources.includes(number),
    );
    if (!citing.length) return null;
    const quotes = [];
    for (const sentence of citing) {
      const quote = quoteOf(sentence, sentence.sources.indexOf(number));
      if (quote && !sameWords(quote, sentence.text) && !quotes.includes(quote)) quotes.push(quote);
    }
    return quotes;
  }

  /**
   * The answer's sources: the state's `sources` (R9: the documents the answer used,
   * each with its pages, in answer order; none for "no information"). A source the
   * answer's sentences cite is quoted by its sentences that support them (sourceQuotes);
   * one no sentence cites (a finished answer's), by the first retrieved text of it.
   */
  function sourceRows(values) {
    const documents = Array.isArray(values.documents) ? values.documents.filter(Boolean) : [];
    const firstText = (id) => (documents.find((d) => d.document_id === id) || {}).text;
    const sources = Array.isArray(values.sources) ? values.sources.filter(Boolean) : [];
    return sources.map((src, at) => {
      const quotes = sourceQuotes(values, at + 1);
      const first = shorten(firstText(src.document_id), SNIPPET_CHARS);
      return {
        name: src.name || src.document_id || t("document"),
        pages: citedPages(src),
        url: safeUrl(src.url),
        quotes: quotes !== null ? quotes : first ? [first] : [],
      };
    });
  }

  /**
   * The pages a source is cited with (R9, Source.cited_pages): its pages, none for a
   * document of one page ("p. 1" of it tells a person nothing); a page of a document of
   * several, or of one whose page count the tool did not know, is shown.
   */
  function citedPages(src) {
    const pages = Array.isArray(src.pages) ? src.pages : [];
    return src.page_count === 1 ? [] : pages;
  }

  function safeUrl(url) {
    if (typeof url !== "string" || url === "") return null;
    try {
      const parsed = new URL(url, window.location.href);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (_) {
      return null;
    }
  }

  /** The fallback phrase of an event name: "FETCHING_DATA" -> "Fetching data" (P4). */
  function plainWords(name) {
    const flat = String(name || "").replace(/[_-]+/g, " ").trim().toLowerCase();
    return flat.charAt(0).toUpperCase() + flat.slice(1);
  }

  /**
   * A line for a person from a custom stream event, or null to show nothing (P4):
   * a tool's progress as its phrase in the user's language (the code stays in the
   * stream for other clients), a coordinator only when it changed the task, and no
   * routing verdicts or tool names (those go to the console, for developers).
   */
  function progressLine(event) {
    if (!event || typeof event !== "object") return null;
    const list = (value) => (Array.isArray(value) ? value : []);
    switch (event.type) {
      case "tool_progress":
        if (event.phrase) return event.phrase;
        return plainWords(event.event) + (event.detail ? " (" + event.detail + ")" : "");
      case "coordinated": {
        // only a coordinator that changed the task is news (C5); events without
        // "changed" predate the key: then only subtasks are
        const subtasks = list(event.subtasks);
        const changed = "changed" in event ? list(event.changed) : subtasks.length ? [1] : [];
        if (!changed.length) return null;
        return subtasks.length ? t("split", { count: subtasks.length }) : t("adjusted");
      }
      case "conditional":
        return event.decision === "skip" ? null : t("one_more_step");
      case "gatekeeper":
        return event.sufficient ? null : t("looking_further");
      case "deep_fallback": {
        const planned = event.subtasks && typeof event.subtasks === "object" ? event.subtasks : {};
        // each phrasing once: a missing piece's subtasks may search the same words
        const asks = [...new Set(Object.values(planned))].map((prompt) => "“" + prompt + "”");
        return asks.length ? t("searching_deeper", { asks: asks.join(", ") }) : null;
      }
      default:
        return null;
    }
  }

  const PAGE_OUTCOMES = ["ANSWER_IN_PAGE", "NOTHING_NEW", "NOT_IN_PAGE"];

  function isToolEvent(event, name) {
    return !!event && event.type === "tool_progress" && event.event === name;
  }

  /** Whether `event` says what came of the page `reading` read (same tool, task, page). */
  function isPageOutcome(event, reading) {
    return (
      !!event &&
      event.type === "tool_progress" &&
      PAGE_OUTCOMES.includes(event.event) &&
      ["tool", "task_no", "detail"].every((key) => event[key] === reading[key])
    );
  }

  function isAnswerChunk(metadata) {
    const tags = metadata && Array.isArray(metadata.tags) ? metadata.tags : [];
    return tags.includes(ANSWER_TAG);
  }

  function handleEvent(ev, turn) {
    switch (ev.event) {
      case "metadata":
        if (ev.data && ev.data.run_id) turn.item.dataset.runId = ev.data.run_id;
        return;
      case "messages": {
        if (!Array.isArray(ev.data) || ev.data.length < 2) return;
        const [message, metadata] = ev.data;
        if (!message || !isAnswerChunk(metadata)) return;
        const kind = String(message.type || "");
        if (kind === "AIMessageChunk" || kind === "ai_chunk") {
          if (message.id) turn.streamed.add(message.id);
          turn.appendAnswer(textOf(message.content));
        } else if (kind === "ai" && !(message.id && turn.streamed.has(message.id))) {
          turn.appendAnswer(textOf(message.content));
        }
        return;
      }
      case "custom":
        console.debug("toolweave progress", ev.data); // the codes, for developers
        turn.addEvent(ev.data);
        return;
      case "error": {
        const data = ev.data || {};
        const text = typeof data === "string" ? data : data.message || data.error || "error";
        turn.failed = true;
        console.error("toolweave chat: the run failed:", text);
        turn.note(t("run_failed"), "error");
        return;
      }
      default:
        return;
    }
  }

  // ---------------------------------------------------------------- state and pauses

  function pendingInterrupts(state) {
    const found = new Map();
    const add = (intr) => {
      if (!intr || typeof intr !== "object") return;
      const key = intr.id || intr.interrupt_id || JSON.stringify(intr.value);
      if (!found.has(key)) found.set(key, intr);
    };
    for (const task of (state && state.tasks) || []) {
      for (const intr of task.interrupts || []) add(intr);
    }
    for (const intr of (state && state.interrupts) || []) add(intr);
    return Array.from(found.values());
  }

  /** The resume value: plain when one interrupt waits, else a map by interrupt id. */
  function resumeValue(interrupts, answers) {
    if (interrupts.length === 1) return answers[interrupts[0].id];
    const byId = {};
    for (const intr of interrupts) {
      if (intr.id in answers) byId[intr.id] = answers[intr.id];
    }
    return byId;
  }

  async function runClientCalls(value, turn) {
    const calls = Array.isArray(value.calls) ? value.calls : [];
    const tools = window.AiTools;
    const results = await Promise.all(
      calls.map(async (call) => {
        const label = toolTitle((call && (call.tool_id || call.name)) || "?");
        turn.addProgress(t("client_working", { tool: label }), "client");
        const result = tools
          ? await tools.runCall(call, clientToolTimeoutMs)
          : { call_id: call.call_id, error: t("no_aitools") };
        if ("error" in result) {
          turn.addProgress(t("client_failed", { tool: label, error: result.error }), "client error");
        } else {
          turn.addProgress(t("client_done", { tool: label }), "client");
        }
        return result;
      })
    );
    return { type: "client_tool_results", results: results };
  }

  function showQuestion(interrupts, intr, turn) {
    const value = intr.value || {};
    const box = node("div", "question");
    box.setAttribute("role", "group");
    const questionId = "q-" + Math.random().toString(36).slice(2);
    const text = node("p", "question-text", value.question || "");
    text.id = questionId;
    box.setAttribute("aria-labelledby", questionId);
    box.appendChild(text);
    const choices = Array.isArray(value.choices) ? value.choices : [];
    if (choices.length) {
      const row = node("div", "choices");
      for (const choice of choices) {
        const button = node("button", "choice", String(choice));
        button.type = "button";
        button.addEventListener("click", () => answerQuestion(String(choice), button));
        row.appendChild(button);
      }
      box.appendChild(row);
    }
    box.appendChild(node("p", "hint", t(choices.length ? "pick_or_type" : "type_answer")));
    if (turn.text.trim() === String(value.question || "").trim()) turn.setAnswer(""); // shown once
    turn.extra.appendChild(box);
    openQuestion = { interrupts: interrupts, interrupt: intr, node: box };
    el.input.placeholder = t("answer_placeholder");
    scrollDown();
  }

  function closeQuestion(chosen) {
    if (!openQuestion) return null;
    const question = openQuestion;
    openQuestion = null;
    question.node.classList.add("answered");
    for (const button of question.node.querySelectorAll("button")) {
      button.disabled = true;
      if (button === chosen) button.setAttribute("aria-pressed", "true");
    }
    el.input.placeholder = t("ask_placeholder");
    return question;
  }

  /**
   * Render what the thread's state says after a stream (or after a reload) and
   * return the next run's payload when the page answers a pause by itself
   * (client tools), else null.
   */
  async function settle(turn) {
    const state = await getJson("/threads/" + encodeURIComponent(threadId) + "/state");
    const values = (state && state.values) || {};
    const interrupts = pendingInterrupts(state);
    if (interrupts.length === 0) {
      if (turn.failed) return null; // the state still holds the previous turn's answer
      if (wroteElsewhere(values.messages)) {
        // another tab joined this conversation and wrote in it: show it as the server has it
        const last = rerender(values.messages);
        if (last) last.showSources(values);
        return null;
      }
      // The stored answer is the one that counts: nothing may have streamed (a graph
      // without tagged answer tokens), or the answer node replaced what streamed (the cut
      // mark added, markers alone like "[3]" replaced by the passages they cite, R9).
      const last = lastMessage(values.messages);
      if (last && last.type === "ai" && textOf(last.content) !== turn.text) {
        turn.setAnswer(textOf(last.content));
      }
      turn.showSources(values);
      return null;
    }
    const clientPauses = interrupts.filter((i) => handledAs(i) === "client_tools");
    const refused = clientPauses.find((i) => i.value.error && answeredBefore(turn, i.value));
    if (refused) {
      // The server refused what this page sent for these calls; sending it again would loop.
      console.error("toolweave chat: the server refused the page's client-tool results:", refused.value.error);
      turn.note(t("results_refused"), "error");
      return null;
    }
    if (clientPauses.length) {
      for (const intr of clientPauses) {
        for (const call of intr.value.calls || []) turn.answered.add(call.call_id);
      }
      const answers = {};
      for (const intr of clientPauses) answers[intr.id] = await runClientCalls(intr.value, turn);
      return { command: { resume: resumeValue(interrupts, answers) } };
    }
    const question = interrupts.find((i) => handledAs(i) === "question");
    if (question) {
      showQuestion(interrupts, question, turn);
      return null;
    }
    const kinds = interrupts.map((i) => (i.value && i.value.type) || typeof i.value).join(", ");
    console.error("toolweave chat: the run waits for a pause kind this page cannot answer:", kinds);
    turn.note(t("cannot_answer_pause"), "error");
    return null;
  }

  function answeredBefore(turn, value) {
    const calls = Array.isArray(value.calls) ? value.calls : [];
    return calls.length > 0 && calls.every((call) => turn.answered.has(call.call_id));
  }

  function lastMessage(messages) {
    return Array.isArray(messages) && messages.length ? messages[messages.length - 1] : null;
  }

  /** The person's data (N3, userdata.js): the run's context, so no checkpoint holds it. */
  function runContext() {
    const helper = window.ToolweaveUserData;
    return helper ? helper.runContext(document, config.userData) : null;
  }

  async function stream(turn, payload) {
    const body = Object.assign(
      { assistant_id: assistantId, stream_mode: STREAM_MODES, stream_subgraphs: true },
      payload
    );
    const context = runContext();
    if (context) body.context = context;
    const path = "/threads/" + encodeURIComponent(threadId) + "/runs/stream";
    const response = await request("POST", path, body);
    for await (const ev of readEvents(response)) handleEvent(ev, turn);
  }

  function setBusy(on, text) {
    busy = on;
    el.send.disabled = on;
    el.composer.setAttribute("aria-busy", on ? "true" : "false");
    el.busy.textContent = on ? text || t("working") : "";
  }

  function reportError(err, turn) {
    if (err instanceof ServerUnreachable) {
      unreachable();
      if (turn) turn.note(t("not_finished_unreachable"), "error");
      return;
    }
    console.error("toolweave chat:", err);
    if (err instanceof ApiError) {
      if (err.status === 404 && turn) {
        turn.note(t("thread_gone"), "error");
      } else if (turn) {
        turn.note(t("not_accepted"), "error");
      }
      return;
    }
    if (turn) turn.note(t("page_broke"), "error");
  }

  /**
   * Stream runs until the turn ends: an answer, a question for the user, or an error.
   * Resolves to false when the server could not be reached.
   */
  async function drive(turn, payload) {
    setBusy(true);
    turn.setBusy(true);
    try {
      await ensureThread();
      let next = payload;
      for (let round = 0; round < MAX_ROUNDS; round++) {
        if (next) await stream(turn, next);
        hideOffline();
        next = await settle(turn);
        if (!next) return true;
      }
      console.error("toolweave chat: stopped after " + MAX_ROUNDS + " client-tool rounds in one turn");
      turn.note(t("too_many_rounds"), "error");
      return true;
    } catch (err) {
      reportError(err, turn);
      return !(err instanceof ServerUnreachable);
    } finally {
      turn.setBusy(false);
      setBusy(false);
    }
  }

  /** After a request went through: the offline banner (and any notice) has done its job. */
  function hideOffline() {
    if (document.body.classList.contains("offline")) {
      document.body.classList.remove("offline");
      stopHealth();
      hideBanner();
    } else if (el.banner.dataset.kind === "info") {
      hideBanner();
    }
  }

  /**
   * The id the person's message goes with (Q6): new for a new text, the same for the
   * same text sent again after a send that may not have gone through, so the graph
   * reads a re-send as the message it has (no second run, no effect done twice).
   */
  function messageId(text) {
    if (!unsent || unsent.text !== text) {
      const id = window.crypto && crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
      unsent = { text: text, id: "page-" + id };
    }
    return unsent.id;
  }

  function runInput(text) {
    const input = { messages: [{ role: "human", content: text, id: messageId(text) }] };
    const ids = window.AiTools ? window.AiTools.ids() : [];
    if (ids.length) input.client_tools = ids;
    return { input: input };
  }

  let unsent = null; // {text, id} of the last message sent without an answer back (Q6)

  function ask(text) {
    pendingTitle = text;
    if (threadId) listThread(threadId, text); // now the latest; titled if it had no title
    addUserMessage(text);
    return drive(new Turn(), runInput(text)).then((reached) => {
      if (reached) unsent = null; // answered: the same text again is a new message
      else if (!el.input.value) el.input.value = text; // ready to send again, same id
    });
  }

  function answerQuestion(text, button) {
    if (busy || !openQuestion) return Promise.resolve();
    const question = closeQuestion(button);
    addUserMessage(text);
    const answers = {};
    answers[question.interrupt.id] = text;
    const resume = { command: { resume: resumeValue(question.interrupts, answers) } };
    return drive(new Turn(), resume).then((reached) => {
      if (!reached) reopenQuestion(question); // nothing was sent: the question still waits
    });
  }

  /**
   * What the person typed while a question waits: the next message on the thread (Q2),
   * not a reply. It goes as a message resume ({type: "message"}): the graph reads it as
   * it reads a message sent on the thread (a reply goes to the tool that asked, an
   * amended request or a new question starts a new turn and closes the question, a
   * cancel drops it), and every server runs a resume of a waiting thread, where some
   * hold a new run until the question is answered. A click on an offered choice is a
   * reply and resumes with it (answerQuestion).
   */
  function sendWhileQuestionWaits(text) {
    if (busy || !openQuestion) return Promise.resolve();
    const question = closeQuestion(null);
    addUserMessage(text);
    const answers = {};
    answers[question.interrupt.id] = { type: "message", content: text };
    const resume = { command: { resume: resumeValue(question.interrupts, answers) } };
    return drive(new Turn(), resume).then((reached) => {
      if (reached) return;
      reopenQuestion(question); // nothing was sent: the question still waits
      if (!el.input.value) el.input.value = text; // ready to send again
    });
  }

  function reopenQuestion(question) {
    question.node.classList.remove("answered");
    for (const button of question.node.querySelectorAll("button")) {
      button.disabled = false;
      button.removeAttribute("aria-pressed");
    }
    openQuestion = question;
    el.input.placeholder = t("answer_placeholder");
  }

  // ---------------------------------------------------------------- restore after a reload

  /** Whether the server holds messages of the person that this tab does not show. */
  function wroteElsewhere(messages) {
    const humans = (messages || []).filter((m) => m && m.type === "human" && textOf(m.content));
    return humans.length > el.log.querySelectorAll(".msg.user").length;
  }

  function rerender(messages) {
    el.log.replaceChildren();
    return renderHistory(messages);
  }

  function renderHistory(messages) {
    let turn = null;
    for (const message of messages || []) {
      const text = textOf(message && message.content);
      if (!text) continue;
      if (message.type === "human") {
        addUserMessage(text);
        turn = null;
      } else if (message.type === "ai") {
        turn = new Turn();
        turn.setAnswer(text);
        turn.showSources(messageValues(message, text)); // as it showed them when it was the last
      }
    }
    return turn;
  }

  /**
   * An answer message's own sources (R9), as the state's values showSources reads: the
   * answer node puts on each answer's message its sources, its sentences that cite them
   * (with the sentence of each source that supports them) and the first passage of each
   * source none cites, so an earlier turn shows after a reload what it showed as the
   * current one (the state's `sources` are the last answer's). None for a question; a
   * message stored before the quotes were shows its sources alone.
   */
  function messageValues(message, text) {
    const meta = (message && message.response_metadata) || {};
    const list = (key) => (Array.isArray(meta[key]) ? meta[key] : []);
    const snippets = meta[MESSAGE_SNIPPETS] && typeof meta[MESSAGE_SNIPPETS] === "object"
      ? meta[MESSAGE_SNIPPETS]
      : {};
    return {
      answer: text,
      sources: list(MESSAGE_SOURCES),
      answer_sentences: list(MESSAGE_SENTENCES).map((s) => Object.assign({ supported: true }, s)),
      documents: Object.entries(snippets).map(([id, snippet]) => ({ document_id: id, text: snippet })),
    };
  }

  async function restore() {
    const saved = savedThread();
    if (!saved) return;
    rememberThread(saved);
    setBusy(true, t("loading"));
    let state;
    try {
      state = await getJson("/threads/" + encodeURIComponent(saved) + "/state");
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError && (err.status === 404 || err.status === 422)) {
        rememberThread(null);
        console.warn("toolweave chat: the server has no thread " + saved);
        listThread(saved, "", true);
        showBanner(t("thread_dropped"), "info");
        return;
      }
      reportError(err, null);
      return;
    }
    setBusy(false);
    const values = (state && state.values) || {};
    const first = (values.messages || []).find((m) => m && m.type === "human");
    listThread(saved, first ? textOf(first.content) : ""); // joined: on this browser's list too
    const last = renderHistory(values.messages);
    const paused = pendingInterrupts(state).length > 0;
    if (!paused) {
      if (last) last.showSources(values);
      if (state && Array.isArray(state.next) && state.next.length) await joinActiveRun();
      return;
    }
    // Show the open question (in the turn that asked it), or answer the client tools.
    await drive(last || new Turn(), null);
  }

  /** After a reload during a run: follow the run that is still going, then settle. */
  async function joinActiveRun() {
    let runs;
    try {
      runs = await getJson("/threads/" + encodeURIComponent(threadId) + "/runs?limit=1");
    } catch (err) {
      reportError(err, null);
      return;
    }
    const active = Array.isArray(runs) ? runs.filter((r) => ACTIVE.includes(r.status)) : [];
    if (active.length === 0) return;
    const turn = new Turn();
    turn.note(t("following_run"));
    setBusy(true);
    turn.setBusy(true);
    try {
      const path = "/threads/" + encodeURIComponent(threadId) + "/runs/" + active[0].run_id + "/stream";
      for await (const ev of readEvents(await request("GET", path))) handleEvent(ev, turn);
    } catch (err) {
      reportError(err, turn);
    } finally {
      turn.setBusy(false);
      setBusy(false);
    }
    await drive(turn, null);
  }

  // ---------------------------------------------------------------- wiring

  el.composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = el.input.value.trim();
    if (!text || busy) return;
    el.input.value = "";
    if (openQuestion) sendWhileQuestionWaits(text);
    else ask(text);
  });

  el.input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      el.composer.requestSubmit();
    }
  });

  el.newThread.addEventListener("click", () => {
    if (busy) return;
    rememberThread(null);
    openQuestion = null;
    pendingTitle = "";
    el.log.replaceChildren(el.empty);
    el.input.value = "";
    el.input.placeholder = t("ask_placeholder");
    hideBanner();
    // the side panel's forms and whatever the client tools keep start afresh too
    for (const form of el.panel ? el.panel.querySelectorAll("form") : []) form.reset();
    for (const filled of document.querySelectorAll(".filled")) filled.classList.remove("filled");
    document.dispatchEvent(new CustomEvent("toolweave:new-conversation"));
    el.input.focus();
  });

  /** Client scripts that failed (W7): said on the page, detailed in the console and the server log. */
  function reportToolFailures() {
    const failed = window.AiTools ? window.AiTools.settle(expectedTools) : [];
    if (!failed.length) return;
    const names = failed.map((f) => toolTitle(f.tool_id)).join(", ");
    el.toolNotes.textContent = t("tools_failed", { names: names });
    el.toolNotes.hidden = false;
    for (const failure of failed) {
      console.error("toolweave chat: the client script of tool " + failure.tool_id + " failed: " + failure.error);
      fetch(pageUrl + "/tools/failed", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(failure),
      }).catch(() => {}); // the server log is a courtesy; the page already said it
    }
  }

  // A form in the side panel with data-chat-template sends its fields as a message.
  for (const form of el.panel ? el.panel.querySelectorAll("form[data-chat-template]") : []) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (busy) return;
      const text = form.dataset.chatTemplate.replace(/\{(\w+)\}/g, (_, name) => {
        const field = form.elements.namedItem(name);
        return field && "value" in field ? String(field.value).trim() : "";
      });
      if (openQuestion) sendWhileQuestionWaits(text);
      else ask(text);
    });
  }

  window.toolweaveChat = {
    ask: ask,
    readEvents: readEvents,
    progressLine: progressLine,
    plainWords: plainWords,
    lang: lang,
    t: t,
    pickLanguage: pickLanguage,
    get threadId() {
      return threadId;
    },
    get busy() {
      return busy;
    },
    assistantId: assistantId,
    clientToolTimeoutMs: clientToolTimeoutMs,
  };

  reportToolFailures();
  showThreads();
  restore().finally(() => {
    document.body.dataset.ready = "true";
  });
})();

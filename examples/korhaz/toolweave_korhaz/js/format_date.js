// Client implementation of the AI tool "format_date" (scope ALL): the browser's Intl
// writes the date out in the user's locale.
AiTools.register("format_date", {
  execute: function (input) {
    var data = JSON.parse(input);
    var locale = data.locale || navigator.language || "hu-HU";
    var parts = String(data.date).split("-").map(Number);
    var date = new Date(parts[0], parts[1] - 1, parts[2]);
    if (isNaN(date.getTime())) {
      return JSON.stringify({ error: "not an ISO date: " + data.date });
    }
    var text = date.toLocaleDateString(locale, { year: "numeric", month: "long", day: "numeric", weekday: "long" });
    return JSON.stringify({ date: data.date, locale: locale, text: text });
  }
});

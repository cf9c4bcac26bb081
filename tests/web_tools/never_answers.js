// Test client script: never settles, so the page's client-side timeout must answer.
AiTools.register("never_answers", {
  execute() {
    return new Promise(() => {});
  },
});

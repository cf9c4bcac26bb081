// Test client script: an async implementation (a Promise of a JSON-able value).
PW.AiTools.register("slow_echo", {
  execute(input) {
    return new Promise((resolve) => setTimeout(() => resolve(JSON.parse(input)), 50));
  },
});

// Test client script that does not parse (W7): only its own tool may go.
AiTools.register("broken_syntax", {
  execute(input) {
    return );
  },
});

AiTools.register("fill_permit_form", {
  execute(input) {
    const args = JSON.parse(input);
    const kind = args.permit_type || "";
    document.querySelector("#permit-type").value = kind;
    document.querySelector("#permit-address").value = args.address || "";
    if (!kind) return "The permit form is open: choose the kind of permit in it.";
    const where = args.address ? ", " + args.address : "";
    return "The permit form is filled in: " + kind + " permit" + where +
      ". Check it and press Send the application.";
  },
});

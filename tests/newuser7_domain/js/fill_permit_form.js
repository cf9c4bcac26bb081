AiTools.register("fill_permit_form", {
  execute(input) {
    const args = JSON.parse(input);
    document.querySelector("#permit-type").value = args.permit_type || "";
    document.querySelector("#permit-address").value = args.address || "";
    return JSON.stringify({ filled: true, permit_type: args.permit_type || null });
  },
});

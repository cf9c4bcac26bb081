// Test client script: fills the page's appointment form (the CLIENT tool's job).
AiTools.register("fill_appointment_form", {
  execute(input) {
    const args = JSON.parse(input);
    document.querySelector("#appointment-department").value = args.department;
    document.querySelector("#appointment-day").value = args.day;
    return "form filled: " + args.department + ", " + args.day;
  },
});

AiTools.register("fill_id_card_form", {
  execute: function (input) {
    var reason = JSON.parse(input).reason;
    var field = document.querySelector("#id-card-reason");
    if (!field) { return "There is no ID card form on this page; nothing was filled."; }
    if (!reason) { return "The ID card form is open; choose the reason yourself."; }
    field.value = reason;
    return "The replacement ID card form is filled in (reason: " + reason + "). Check it and send it.";
  }
});

// Fills the new-connection form A1 on the page (W3). Says what it filled, in Italian.
AiTools.register("compila_modulo_allacciamento", {
  execute: function (input) {
    var data = JSON.parse(input || "{}");
    var uso = document.querySelector("#allacciamento-uso");
    var indirizzo = document.querySelector("#allacciamento-indirizzo");
    if (!uso && !indirizzo) { return "Il modulo A1 non è in questa pagina: non è stato compilato."; }
    if (uso && data.uso) { uso.value = data.uso; }
    if (indirizzo && data.indirizzo) { indirizzo.value = data.indirizzo; }
    if (!data.uso && !data.indirizzo) {
      return "Ho aperto il modulo A1: indicate voi l'uso e l'indirizzo, poi inviatelo.";
    }
    return "Il modulo A1 è compilato: controllatelo e inviatelo.";
  }
});

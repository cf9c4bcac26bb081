"""Telemar's tools: service status, plan change (acts), invoice (gated), contacts (answer)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from toolweave import (
    ChatbotTool,
    EmptyRequest,
    ToolCallContext,
    ToolResult,
    UniqueTextDocument,
)

from .backend import BACKEND

STATUS_URL = "https://www.telemar.example.pt/ajuda/estado-do-servico"
CONTACTS_URL = "https://www.telemar.example.pt/contactos"

# postcode prefix (the 4 digits) -> status line
OUTAGES = {
    "1000": "há uma avaria na rede fixa em Lisboa: internet e televisão afetadas; "
    "reposição prevista hoje até às 18h00.",
    "4000": "há manutenção programada da rede móvel no Porto entre as 2h00 e as 5h00.",
}


def _logged_in(user_data: dict | None) -> bool:
    return bool(user_data and user_data.get("cliente_id"))


class EstadoRequest(BaseModel):
    codigo_postal: str | None = Field(
        default=None,
        title="código postal",
        pattern=r"^\d{4}-\d{3}$",
        examples=["1000-001"],
    )


class EstadoServico(ChatbotTool[EstadoRequest]):
    name = "estado_servico"
    domain = "telemar"
    description = "Estado da rede e avarias na zona do cliente, pelo código postal."
    executable_instruction = (
        "estado_servico: true when the user asks whether there is an outage or a network "
        "problem in their area (avaria, falha de rede, sem internet, sem rede, estado do "
        "serviço na minha zona)"
    )
    routing_examples = (
        "Há alguma avaria na minha zona?",
        "Estou sem internet, há alguma falha na rede?",
        "Qual é o estado do serviço no código postal 1000-001?",
    )
    request_model = EstadoRequest
    instruction = "Fill codigo_postal with the Portuguese postcode (NNNN-NNN) the user wrote."
    required_inputs = ("codigo_postal",)
    ask_for_missing_inputs = True
    progress_messages: ClassVar[dict[str, dict[str, str]]] = {
        "CHECKING": {"pt": "A verificar o estado da rede", "en": "Checking the network status"}
    }

    def execute(self, request: EstadoRequest, ctx: ToolCallContext) -> ToolResult | None:
        postcode = request.codigo_postal
        if postcode is None:
            return None
        ctx.progress("CHECKING")
        line = f"Na zona do código postal {postcode}, " + OUTAGES.get(
            postcode[:4], "não há nenhuma avaria registada: a rede está a funcionar normalmente."
        )
        return ToolResult.as_guaranteed_context(  # the person's own zone must reach the answer (R5)
            self.name,
            [
                UniqueTextDocument(
                    document_id="estado-rede",
                    document_name="Estado da rede",
                    document_url=STATUS_URL,
                    sentence_number=1,
                    text=line,
                )
            ],
        )


class PlanoRequest(BaseModel):
    plano: Literal["Base", "Plus", "Max"] | None = Field(default=None, title="plano")


class MudarTarifario(ChatbotTool[PlanoRequest]):
    name = "mudar_tarifario"
    domain = "telemar"
    priority = 20
    description = "Muda o tarifário (plano móvel) do cliente para Base, Plus ou Max."
    executable_instruction = (
        "mudar_tarifario: true when the user asks to change their tariff now (mudar, "
        "alterar, trocar, passar)"
    )
    routing_examples = (
        "Quero mudar para o plano Max.",
        "Por favor, alterem o meu tarifário para o Plus.",
        "Quero mudar de plano.",
    )
    not_for = (
        "Devo mudar para o plano Max?",
        "Posso mudar de plano a meio do mês?",
        "Vale a pena mudar para o plano Max?",
        "Quanto custa o plano Max?",
        "A mudança de plano é gratuita?",
        "Quando fica ativa a mudança para um plano inferior?",
        "Que planos existem?",
    )
    returns_answer = True
    side_effects = True
    request_model = PlanoRequest
    instruction = "Fill plano with the plan the user wants to move to: Base, Plus or Max."
    required_inputs = ("plano",)
    ask_for_missing_inputs = True

    def is_eligible(self, user_data: dict | None) -> bool:  # logged-in customers only (T4)
        return _logged_in(user_data)

    def execute(self, request: PlanoRequest, ctx: ToolCallContext) -> ToolResult | None:
        if request.plano is None:
            return None
        customer = str((ctx.user_data or {}).get("cliente_id"))
        change = BACKEND.change_plan(ctx.idempotency_key, customer, request.plano)
        return ToolResult.as_answer(
            self.name,
            f"Feito: o seu tarifário foi alterado para o plano {change.plan}. "
            "Vai receber a confirmação por SMS.",
        )


class FaturaAtual(ChatbotTool[EmptyRequest]):
    name = "fatura_atual"
    domain = "telemar"
    description = "A última fatura do cliente com sessão iniciada: valor, data e prazo."
    executable_instruction = (
        "fatura_atual: true when the user asks about their own latest invoice (a minha "
        "fatura, quanto tenho a pagar, valor da fatura, prazo de pagamento da minha fatura)"
    )
    routing_examples = (
        "Quanto é a minha última fatura?",
        "Até quando tenho de pagar a minha fatura?",
    )

    def is_eligible(self, user_data: dict | None) -> bool:  # logged-in customers only (T4)
        return _logged_in(user_data)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        customer = (ctx.user_data or {}).get("cliente_id")
        plan = BACKEND.plans.get(str(customer), "Plus")
        return ToolResult.as_guaranteed_context(
            self.name,
            f"A sua última fatura ({customer}) é de 24,99 euros, emitida a 5 de novembro de "
            f"2026, a pagar até 25 de novembro de 2026. O seu plano atual é o {plan}.",
        )


class LinhasApoio(ChatbotTool[EmptyRequest]):
    name = "linhas_apoio"
    domain = "telemar"
    returns_answer = True
    description = "Os números de telefone da Telemar."
    executable_instruction = (
        "linhas_apoio: true when the user asks which phone number to call (número de "
        "telefone, para que número ligo, contacto telefónico, linha de apoio)"
    )
    routing_examples = ("Para que número ligo?", "Qual é o número de telefone da Telemar?")
    not_for = ("A que horas abre o apoio técnico?",)

    def execute(self, request: EmptyRequest, ctx: ToolCallContext) -> ToolResult | None:
        text = (
            "Apoio técnico e perda ou roubo: 16100 (todos os dias, das 8h00 às 24h00).\n"
            "Apoio comercial e faturas: 16200 (dias úteis, das 9h00 às 21h00)."
        )
        return ToolResult.as_answer(
            self.name,
            text,
            sources=[
                UniqueTextDocument(
                    document_id="contactos",
                    document_name="Contactos",
                    document_url=CONTACTS_URL,
                    sentence_number=1,
                    text=text,
                )
            ],
        )


def own_tools() -> list[ChatbotTool]:
    return [EstadoServico(), MudarTarifario(), FaturaAtual(), LinhasApoio()]

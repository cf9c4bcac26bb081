"""Telemar, a European Portuguese telecom operator's customer support (a test domain)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from toolweave import Domain, SqliteDocumentStore, documents_domain, ingest

from .backend import BACKEND
from .tools import own_tools

PAGES = Path(__file__).parent / "pages"

STOPWORDS = [
    "o", "a", "os", "as", "um", "uma", "uns", "umas", "de", "do", "da", "dos", "das", "em",
    "no", "na", "nos", "nas", "num", "numa", "por", "para", "pelo", "pela", "pelos",
    "pelas", "com", "sem", "e", "ou", "que", "se", "é", "são", "ser", "estar", "está",
    "estão", "foi", "ao", "aos", "à", "às", "este", "esta", "isto", "esse", "essa", "isso",
    "aquele", "aquela", "qual", "quais", "quanto", "quanta", "quantos", "quantas", "como",
    "onde", "quando", "quem", "porque", "eu", "me", "mim", "meu", "minha", "meus",
    "minhas", "seu", "sua", "seus", "suas", "lhe", "vocês", "você", "tem", "têm", "ter",
    "há", "posso", "pode", "podem", "não", "sim", "mais", "muito", "já", "também", "ainda",
    "só", "até", "telemar",
]  # fmt: skip

SYSTEM_PROMPT = (
    "És o assistente de apoio ao cliente da Telemar, um operador de telecomunicações "
    "português. Responde em português europeu, com frases curtas, só com o que as fontes dizem."
)

TEXTS: dict[str, dict[str, str]] = {
    "no_information": {"pt": "Não encontrei informação sobre isso nas fontes disponíveis."},
    "closest_pages": {"pt": "As páginas mais próximas que encontrei: {pages}"},
    "ask_for_input": {"pt": "Qual {field}?"},
    "for_example": {"pt": " (por exemplo {example})"},
    "clarification_limit": {
        "pt": "Ainda preciso de mais informação, mas já fiz demasiadas perguntas. "
        "Pergunte de novo com os detalhes. (Última pergunta: {question})"
    },
    "cancelled": {"pt": "Muito bem, deixei essa pergunta. Em que mais posso ajudar?"},
    "sent_again": {
        "pt": "Esta mensagem já tinha sido respondida, e o pedido foi feito nessa altura; "
        "aqui está de novo essa resposta. Nada foi feito uma segunda vez."
    },
    "kept_effect": {
        "pt": "Feito antes de o pedido ser alterado, e não feito de novo: {said} "
        "A alteração não muda isto."
    },
    "kept_effect_unsaid": {
        "pt": "Algo foi feito antes de o pedido ser alterado ({tool}), e não foi feito de "
        "novo. A alteração não o muda."
    },
    "failed_effect": {
        "pt": "Isto não foi feito: {tool} falhou ({error}). Peça de novo, por favor."
    },
    "unsure_effect": {
        "pt": "Não sei se isto foi feito: {tool} não obteve resposta ({error}). Peça de novo "
        "com as mesmas palavras: o pedido é enviado como o mesmo, não como um novo."
    },
    "done_already": {"pt": "Já feito ({tool}), e não feito de novo."},
    "client_only": {"pt": "Isto só pode ser feito na página do chat ({tool}); não foi feito aqui."},
    "still_running": {
        "pt": "Isto ainda está a ser feito: {tool} ainda não terminou. Envie a mesma "
        "mensagem daqui a pouco para ver o resultado."
    },
    "sources": {"pt": "Fontes:"},
    "page": {"pt": "p. {pages}"},
    "assistant": {"pt": "as respostas vêm de {label}"},
    "offline": {
        "pt": "as respostas vêm do modelo offline (sem LLM: encaminhamento lexical, "
        "respostas extraídas)"
    },
    "reply_hint": {
        "pt": '(responda com: toolweave ask --thread {thread} --domain {domain}{more} "...")'
    },
    "chat_reply_hint": {
        "pt": "(responda, ou pergunte outra coisa: uma pergunta nova tem resposta)"
    },
    "finishing": {"pt": "(conversa {thread}: a terminar a execução interrompida: {question})"},
    "finishing_unknown": {"pt": "(conversa {thread}: a terminar a execução interrompida)"},
    "chat_thread": {
        "pt": "conversa {thread} (continue com: toolweave ask --thread {thread} "
        '--domain {domain}{more} "...")'
    },
    "chat_leave": {"pt": 'escreva "exit" ou carregue em Ctrl-D para sair'},
    "prompt": {"pt": "você> "},
    "split": {"pt": "Dividi a pergunta em {count} partes"},
    "adjusted": {"pt": "Ajustei a pergunta"},
    "one_more_step": {"pt": "É preciso mais um passo"},
    "looking_further": {"pt": "A procurar mais: as primeiras páginas não diziam tudo"},
    "model_retry": {"pt": "O modelo não respondeu; a tentar de novo"},
    "reply_refused": {
        "pt": "(a resposta não chegou a {tools}, que perguntou: a sua verificação recusou os "
        "dados do utilizador desta resposta (T4). --user-data nunca é guardado: indique-o em "
        "cada resposta e pergunte de novo)"
    },
}

PROGRESS_MESSAGES: dict[str, dict[str, str]] = {
    "SEARCHING": {"pt": "A procurar nos documentos"},
    "SEARCHING_FOR": {"pt": "A procurar nos documentos: {detail}"},
    "FOUND": {"pt": "Passagens encontradas: {detail}"},
    "CANDIDATE_PAGES": {"pt": "Páginas que o podem dizer: {detail}"},
    "READING_PAGE": {"pt": "A ler “{name}” ({n}/{total})"},
    "ANSWER_IN_PAGE": {"pt": "“{name}” ({n}/{total}): encontrei uma resposta"},
    "NOTHING_NEW": {"pt": "“{name}” ({n}/{total}): nada de novo"},
    "NOT_IN_PAGE": {"pt": "“{name}” ({n}/{total}): sem resposta"},
    "BUDGET_SPENT": {"pt": "Limite de pesquisa atingido"},
    "NOT_FOUND": {"pt": "Nada encontrado"},
    "TOO_MANY_PAGES": {"pt": "Demasiadas páginas para ler"},
    "NOT_READ": {"pt": "Página não lida"},
    "SCANNING_DOMAIN": {"pt": "A percorrer todas as páginas"},
    "ERROR": {"pt": "Um passo falhou; respondo com o que encontrei"},
}


def build_store() -> SqliteDocumentStore:
    store = SqliteDocumentStore(":memory:", stopwords=STOPWORDS)
    ingest([str(PAGES)], store, domain="telemar")
    return store


def telemar_domain_and_tools() -> tuple[Domain, list[Any]]:
    domain, tools = documents_domain(
        "telemar",
        build_store(),
        tools=own_tools(),
        system_prompt=SYSTEM_PROMPT,
        default_language="pt",
        texts=TEXTS,
    )
    domain = dataclasses.replace(domain, progress_messages=PROGRESS_MESSAGES)
    return domain, tools


def plugin() -> Any:
    from toolweave import Plugin

    return Plugin(name="telemar", domains={"telemar": telemar_domain_and_tools})


__all__ = ["BACKEND", "plugin", "telemar_domain_and_tools"]

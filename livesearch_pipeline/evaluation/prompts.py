"""Judge prompts, in English and Chinese.

Two tasks, each with a strict JSON reply that `judge.py` validates with pydantic:

- semantic equivalence of a text answer (names, periods, categories) with the reference:
  `{"correct": true|false, "reason": "..."}`. Numbers are never sent here (DESIGN §4.3).
- extraction of the final answer from a long free-text reply that mentions several numbers:
  `{"final_answer": "<the span as written>" | null, "reason": "..."}`. The reference is NOT
  shown: the model only says which number the agent committed to; the tolerance check stays
  deterministic and machine-readable.

The language follows the agent's answer (Chinese when it contains CJK characters), so that the
judge reads the answer in the language it was written in.
"""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["en", "zh"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_language(text: str | None) -> Language:
    return "zh" if text and _CJK.search(text) else "en"


SEMANTIC_SYSTEM: dict[Language, str] = {
    "en": (
        "You are a strict grader for a financial question-answering benchmark. You decide whether "
        "a candidate answer states the same thing as the reference answer. Accept different wording, "
        "abbreviations, aliases, translations and letter case that denote the same entity, period or "
        "category. Reject answers that are vaguer, name a different entity or period, hedge between "
        "several options, or contradict the reference. Ignore explanations around the answer; judge "
        "only what the candidate commits to as its final answer.\n"
        'Reply with one JSON object and nothing else: {"correct": true or false, "reason": "<one short '
        'sentence>"}'
    ),
    "zh": (
        "你是一个金融问答基准的严格评分员。请判断候选答案与参考答案表达的是否为同一内容。"
        "指代同一实体、同一期间或同一类别的不同措辞、简称、别名、译名或大小写差异均可接受。"
        "若候选答案更含糊、指向不同的实体或期间、在多个选项之间摇摆，或与参考答案矛盾，则判为错误。"
        "忽略答案周围的解释，只评判候选答案最终给出的结论。\n"
        '只回复一个 JSON 对象，不要输出其他内容：{"correct": true 或 false, "reason": "<一句简短理由>"}'
    ),
}

SEMANTIC_USER: dict[Language, str] = {
    "en": "Question:\n{question}\n\nReference answer:\n{reference}\n\nCandidate answer:\n{candidate}",
    "zh": "问题：\n{question}\n\n参考答案：\n{reference}\n\n候选答案：\n{candidate}",
}

EXTRACT_SYSTEM: dict[Language, str] = {
    "en": (
        "You read an answer written by a financial research assistant and identify the single final "
        "answer it gives to the question (a number, a name or a date). Copy it exactly as written in the text, "
        "with its sign, unit or magnitude word and currency if present (for example \"-1,234.5 million "
        "USD\" or \"3.2%\"). Do not compute, convert or round anything, and do not pick numbers that are "
        "only context (previous values, changes, dates). If the answer gives no single final answer, or "
        "hedges between several, use null.\n"
        'Reply with one JSON object and nothing else: {"final_answer": "<value as written>" or null, '
        '"reason": "<one short sentence>"}'
    ),
    "zh": (
        "你将阅读一位金融研究助理写下的回答，找出其对问题给出的唯一最终答案（数值、名称或日期）。"
        "请按原文逐字照抄该答案，若有正负号、单位、量级词（如万、亿）或币种也一并照抄"
        "（例如“-1,234.5亿元”或“3.2%”）。不要计算、换算或四舍五入，也不要选取仅作为背景的数字"
        "（如前值、涨跌额、日期）。若回答没有给出唯一的最终答案，或在多个答案之间摇摆，则填 null。\n"
        '只回复一个 JSON 对象，不要输出其他内容：{"final_answer": "<原文中的数值>" 或 null, '
        '"reason": "<一句简短理由>"}'
    ),
}

EXTRACT_USER: dict[Language, str] = {
    "en": "Question:\n{question}\n\nExpected unit of the answer: {unit}\n\nAnswer to read:\n{answer}",
    "zh": "问题：\n{question}\n\n答案的预期单位：{unit}\n\n待读取的回答：\n{answer}",
}

REASK: dict[Language, str] = {
    "en": (
        "Your previous reply could not be used: {problem}. Reply again with exactly one JSON object "
        "of the required form and nothing else (no code fences, no commentary)."
    ),
    "zh": "你上一次的回复无法使用：{problem}。请重新回复，且只输出一个符合要求格式的 JSON 对象（不要代码块，不要其他说明）。",
}

_NO_UNIT: dict[Language, str] = {"en": "none (a plain value)", "zh": "无（纯数值）"}


def semantic_messages(question: str, reference: str, candidate: str, language: Language) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SEMANTIC_SYSTEM[language]},
        {
            "role": "user",
            "content": SEMANTIC_USER[language].format(question=question, reference=reference, candidate=candidate),
        },
    ]


def extraction_messages(question: str, answer: str, unit: str | None, language: Language) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": EXTRACT_SYSTEM[language]},
        {
            "role": "user",
            "content": EXTRACT_USER[language].format(question=question, answer=answer, unit=unit or _NO_UNIT[language]),
        },
    ]


def reask_message(problem: str, language: Language) -> dict[str, str]:
    return {"role": "user", "content": REASK[language].format(problem=problem)}

"""Answers in the Chinese text's unit, scored with and without `lang` (issue 21), on a real day.

    python benchmarks/answer_language.py --date 2026-11-30 [--data-dir data]

For every question of D's scoring set with a Chinese text (`question_zh`) and a numeric gold
value, the analyst answer is the gold value restated in the unit that Chinese text asks for
(`normalize.reading_unit`: 万股 for million shares, 亿元 for billion CNY, ...), written as a bare
number at the decimals the text asks for (the rule's) — what an analyst answering 「…是多少亿元？保留2位小数。」 writes. The
predictions are evaluated twice with the evaluator: with `"lang": "zh"` and without `lang` (read in
the English rule's unit, as before issue 21). Also listed: the issue's three measured texts
(沪深港通持股数量…万股, 成交额…亿元, 融资余额…亿元) when D's pool asks them, and label questions
answered with the lexicon's English name of a Chinese gold label.

Issue 28 (each text at its own precision): every such answer is also shifted by 40 steps of the
Chinese text's last decimal (0.40 万元 at 2 decimals) and scored with lang=zh; the English text's
tolerance (half a step of its own last decimal, 0.005 million = 0.5 万元) would admit the shift
where the Chinese unit is 100× finer, the Chinese text's must refuse every one.

Target: every Chinese-unit answer correct with lang=zh and every shifted one wrong (PASS), and the
count of questions whose Chinese unit differs from the rule's (the ones that scored wrong before).
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
from pathlib import Path

from livesearch_pipeline.core.lexicon import load_lexicon
from livesearch_pipeline.core.matching import text_rule
from livesearch_pipeline.core.models import Prediction, PredictionRunMeta
from livesearch_pipeline.core.normalize import reading_unit, unit_scale
from livesearch_pipeline.core.qid import qid_set_hash
from livesearch_pipeline.core.snapshot import scoring_qids
from livesearch_pipeline.evaluation.evaluator import evaluate
from livesearch_pipeline.evaluation.inputs import load_gold, load_served

MEASURED_TEXTS = ("沪深港通持股数量是多少万股", "成交额是多少亿元", "融资余额是多少亿元")
SHIFT_STEPS = 40  # the 0.40 万元 at 2 decimals


def _write(path: Path, predictions: list[Prediction], date: dt.date, served_qids: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(p.model_dump_json(exclude_none=True) + "\n" for p in predictions), encoding="utf-8")
    meta = PredictionRunMeta(agent="analyst", model=None, date=date, served_qid_set_hash=qid_set_hash(served_qids),
                             started_at=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc))
    (path.parent / "predictions.meta.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--date", type=dt.date.fromisoformat, required=True)
    parser.add_argument("--data-dir", type=Path, default=Path("data"))
    args = parser.parse_args(argv)
    served_path = args.data_dir / "served" / f"served_questions_{args.date}.jsonl"
    gold_path = args.data_dir / "gold" / f"gold_answers_{args.date}.jsonl"
    served, gold = load_served(served_path), load_gold(gold_path)
    scoring = set(scoring_qids({q.qid for q in served}, gold.manifest))
    lexicon = load_lexicon()
    zh_answers: list[Prediction] = []
    shifted: list[Prediction] = []
    english_admits = 0  # shifted answers within the English text's tolerance (as scored before issue 28)
    measured: list[tuple[str, str, str]] = []
    labels: list[Prediction] = []
    chinese = 0
    for question in served:
        if question.qid not in scoring or not question.question_zh:
            continue
        chinese += 1
        answer = gold.answers[question.qid]
        rule = answer.match
        if isinstance(answer.value, str):
            names = [n for n in lexicon.label_names(answer.value) if n.isascii()]
            if names and not answer.value.isascii():
                labels.append(Prediction(qid=question.qid, answer=names[0], lang="zh"))
            continue
        unit = reading_unit(rule.unit, "zh")
        _, rule_factor = unit_scale(rule.unit)
        _, zh_factor = unit_scale(unit)
        if zh_factor == rule_factor:  # 元 for CNY, 股 for shares: the same number either way
            continue
        _, gold_factor = unit_scale(answer.unit or rule.unit)
        value = float(answer.value) * gold_factor / zh_factor
        # At the decimals the Chinese text asks for ("保留2位小数", the rule's own).
        text = f"{value:.{rule.decimals or 0}f}" if rule.decimals is not None else f"{round(value)}"
        zh_answers.append(Prediction(qid=question.qid, answer=text, lang="zh"))
        zh_rule = text_rule(rule, "zh")
        step = 10.0 ** -(zh_rule.decimals or 0)
        shifted.append(Prediction(qid=question.qid, answer=f"{value + SHIFT_STEPS * step:.{zh_rule.decimals or 0}f}",
                                  lang="zh"))
        english_half_step = 0.5 * 10.0 ** -(rule.decimals or 0) * rule_factor
        english_admits += SHIFT_STEPS * step * zh_factor <= english_half_step
        for phrase in MEASURED_TEXTS:
            if phrase in question.question_zh and len([m for m in measured if m[0] == phrase]) < 1:
                measured.append((phrase, question.qid, text))
    qids = [q.qid for q in served]
    with tempfile.TemporaryDirectory() as tmp:
        with_lang = evaluate(served_path, gold_path, _write(Path(tmp) / "zh" / "predictions.jsonl", zh_answers,
                                                            args.date, qids))
        without = [Prediction(qid=p.qid, answer=p.answer) for p in zh_answers]
        without_lang = evaluate(served_path, gold_path, _write(Path(tmp) / "en" / "predictions.jsonl", without,
                                                               args.date, qids))
        shifted_run = evaluate(served_path, gold_path, _write(Path(tmp) / "shifted" / "predictions.jsonl", shifted,
                                                              args.date, qids))
        label_run = evaluate(served_path, gold_path, _write(Path(tmp) / "labels" / "predictions.jsonl", labels,
                                                            args.date, qids)) if labels else None
    right_zh = {v.qid for v in with_lang.verdicts if v.correct}
    right_en = {v.qid for v in without_lang.verdicts if v.correct}
    asked = {p.qid for p in zh_answers}
    print(f"{args.date}: {len(scoring)} scored, {chinese} with a Chinese text, {len(asked)} of them ask in a "
          f"Chinese unit other than the rule's")
    print(f"bare numbers in the Chinese unit: lang=zh {len(asked & right_zh)}/{len(asked)} correct; "
          f"without lang {len(asked & right_en)}/{len(asked)}")
    for phrase, qid, text in measured:
        print(f"  「{phrase}」 {qid} answered {text}: lang=zh {'correct' if qid in right_zh else 'WRONG'}, "
              f"without lang {'correct' if qid in right_en else 'wrong'}")
    if label_run is not None:
        label_qids = {p.qid for p in labels}
        decided = [v for v in label_run.verdicts if v.qid in label_qids]
        print(f"labels answered in English for a Chinese gold: {sum(bool(v.correct) for v in decided)}/{len(decided)} "
              f"correct, {sum(v.judge == 'deterministic' for v in decided)} without a judge")
    shifted_right = sum(bool(v.correct) for v in shifted_run.verdicts if v.qid in asked)
    print(f"shifted by {SHIFT_STEPS} steps of the Chinese last decimal: lang=zh {shifted_right}/{len(shifted)} "
          f"correct; the English text's tolerance would admit {english_admits}/{len(shifted)}")
    ok = asked <= right_zh and shifted_right == 0
    print("PASS" if ok else "FAIL", "(every Chinese-unit answer correct with lang=zh, every shifted one wrong)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

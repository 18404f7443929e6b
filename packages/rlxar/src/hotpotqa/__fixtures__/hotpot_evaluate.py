"""The answer half of HotpotQA's official evaluation script (hotpot_evaluate_v1.py): its
normalize_answer, f1_score, exact_match_score, update_answer and eval, with the gold read as
JSON lines. Tests run it to check the TypeScript metrics against the official ones.

  python3 hotpot_evaluate.py pairs < [[prediction, gold], ...]   -> [[normalize_answer(prediction), f1], ...]
  python3 hotpot_evaluate.py eval <preds.json> <gold.jsonl>      -> {"metrics": {em, f1}, "per": {id: [em, f1]}}
"""
import json
import re
import string
import sys
from collections import Counter


def normalize_answer(s):
    def remove_articles(text):
        return re.sub(r'\b(a|an|the)\b', ' ', text)

    def white_space_fix(text):
        return ' '.join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return ''.join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def f1_score(prediction, ground_truth):
    normalized_prediction = normalize_answer(prediction)
    normalized_ground_truth = normalize_answer(ground_truth)
    ZERO_METRIC = (0, 0, 0)
    if normalized_prediction in ['yes', 'no', 'noanswer'] and normalized_prediction != normalized_ground_truth:
        return ZERO_METRIC
    if normalized_ground_truth in ['yes', 'no', 'noanswer'] and normalized_prediction != normalized_ground_truth:
        return ZERO_METRIC
    prediction_tokens = normalized_prediction.split()
    ground_truth_tokens = normalized_ground_truth.split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return ZERO_METRIC
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1, precision, recall


def exact_match_score(prediction, ground_truth):
    return normalize_answer(prediction) == normalize_answer(ground_truth)


def update_answer(metrics, prediction, gold):
    em = exact_match_score(prediction, gold)
    f1, prec, recall = f1_score(prediction, gold)
    metrics['em'] += float(em)
    metrics['f1'] += f1
    return em, f1


def evaluate(prediction_file, gold_file):
    with open(prediction_file) as f:
        prediction = json.load(f)
    with open(gold_file) as f:
        gold = [json.loads(line) for line in f if line.strip()]
    metrics = {'em': 0, 'f1': 0}
    per = {}
    for dp in gold:
        cur_id = dp['_id']
        if cur_id not in prediction['answer']:
            # The official script prints "missing answer" and scores the question 0.
            per[cur_id] = [0, 0]
        else:
            em, f1 = update_answer(metrics, prediction['answer'][cur_id], dp['answer'])
            per[cur_id] = [float(em), f1]
    for k in metrics.keys():
        metrics[k] /= len(gold)
    return {'metrics': metrics, 'per': per}


if __name__ == '__main__':
    if sys.argv[1] == 'pairs':
        pairs = json.load(sys.stdin)
        json.dump([[normalize_answer(a), f1_score(a, b)[0]] for a, b in pairs], sys.stdout)
    else:
        json.dump(evaluate(sys.argv[2], sys.argv[3]), sys.stdout)

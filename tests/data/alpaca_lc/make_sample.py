"""Write a small made-up sample in AlpacaEval's layout: annotations.json (a JSON array, every
model against the baseline) and df_gamed.csv (two gamed baselines on the same instructions)."""
import json, sys
import numpy as np
import pandas as pd

out = sys.argv[1]
rng = np.random.default_rng(43)
n = 80
words = "the a model answer list step note data plan idea code test text word value table".split()
def text(k):
    s = " ".join(rng.choice(words, size=max(1, k // 5)))
    return s[:k] if len(s) >= k else s + "." * (k - len(s))
instructions = [f"Instruction {i}: " + text(int(rng.integers(5, 20))) for i in range(n)]
difficulty = rng.normal(0, 0.8, n)
base_len = rng.integers(15, 100, n)
baseline = [text(int(L)) for L in base_len]
models = {"concise": (-0.6, 0.3, 0.5), "verbose": (0.2, 2.5, 1.4), "strong": (0.9, 1.6, 0.9)}
records = []
for name, (skill, len_scale, _) in models.items():
    lengths = np.maximum(10, (base_len * len_scale * rng.lognormal(0, 0.3, n))).astype(int)
    for i in range(n):
        delta = (lengths[i] - base_len[i]) / 300
        z = skill + 1.2 * np.tanh(delta) - difficulty[i] * 0.7 + rng.normal(0, 1.0)
        p = 1 + 1 / (1 + np.exp(-z))
        u = rng.random()
        if u < 0.08: p = 1.5
        elif u < 0.10: p = 0          # AlpacaEval's old code for a draw
        elif u < 0.2: p = float(np.round(p))
        records.append(dict(instruction=instructions[i], output_1=baseline[i], generator_1="gpt4_1106_preview",
                            output_2=text(int(lengths[i])), generator_2=name, annotator="weighted_alpaca_eval_gpt4_turbo",
                            preference=float(p) if p != 0 else 0))
open(f"{out}/annotations.json", "w").write("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
rows = []
for g, scale in (("gpt4_gamed_verbose", 3.0), ("gpt4_gamed_concise", 0.25)):
    lengths = np.maximum(10, base_len * scale * rng.lognormal(0, 0.2, n)).astype(int)
    d = base_len - lengths
    std = d / d.std(ddof=1)
    for i in range(n):
        z = 0.0 - 1.5 * np.tanh(std[i]) - difficulty[i] * 0.7 + rng.normal(0, 0.7)
        rows.append(dict(model=g, index=i, preference=float(1 / (1 + np.exp(-z))), std_delta_len=float(std[i]),
                         instruction_difficulty=float(difficulty[i]), not_gamed_baseline=False))
pd.DataFrame(rows).to_csv(f"{out}/df_gamed.csv", index=False)
pd.Series(difficulty, name="instruction_difficulty").rename_axis("index").to_csv(f"{out}/instruction_difficulty.csv")

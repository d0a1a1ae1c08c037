"""AlpacaEval's joint fit of the instruction difficulty (notebooks/instruction_difficulty.ipynb of
tatsu-lab/alpaca_eval: its joint formula, fitted by glm_winrate.fit_LogisticRegressionCV as the
notebook's get_index_param_from_joint_optimization does), on the sample's annotations, every model
against gpt4_1106_preview, rows in the order models by name, instructions by place; without the
notebook's 1e-4 random jitter of the length differences. Prints {index: difficulty}."""
import json, sys, types, warnings, logging
warnings.filterwarnings("ignore"); logging.disable(logging.WARNING)
src, data = sys.argv[1], sys.argv[2]
pkg = types.ModuleType("alpaca_eval"); pkg.__path__ = [f"{src}/alpaca_eval"]; sys.modules["alpaca_eval"] = pkg
import numpy as np
import pandas as pd
from alpaca_eval.metrics import glm_winrate

ann = pd.DataFrame(json.load(open(f"{data}/annotations.json")))
parts = []
for model, part in ann.groupby("generator_2", sort=True):
    part = part.reset_index(drop=True).reset_index(names="index")
    parts.append(part)
df = pd.concat(parts, ignore_index=True)
df["preference"] = df["preference"].astype(float).replace({0.0: 1.5}) - 1
df["rand_delta_len"] = (df["output_1"].str.len() - df["output_2"].str.len()).astype(float)
df["rand_delta_len_std_only"] = df["rand_delta_len"] / df.groupby("generator_2")["rand_delta_len"].transform("std")
df["not_gamed_baseline"] = True
ordered_models = sorted(df["generator_2"].unique())
formula = ("C(generator_2, levels=ordered_models): np.tanh(rand_delta_len_std_only) + C(generator_2, "
           "levels=ordered_models) + C(index) + not_gamed_baseline.astype(float) - 1")
from patsy import dmatrix
X = dmatrix(formula, df, return_type="dataframe")
X["preference"] = df["preference"]
out = {}
for tol in (1e-4, 1e-10):
    model = glm_winrate.fit_LogisticRegressionCV(X, "preference", is_ytrue_proba=True, n_splits=5, tol=tol)
    params = pd.Series(model.coef_[0], index=model.feature_names_in_)
    idx = {int(k.split("[T.")[-1].split("]")[0]): float(v) for k, v in params.items() if "C(index)" in k}
    idx[0] = 0.0
    out[f"tol{tol:g}"] = {"C": float(model.C_[0]), "difficulty": {str(k): idx[k] for k in sorted(idx)}}
print(json.dumps(out, indent=1))

"""AlpacaEval's own code (src/alpaca_eval/metrics/glm_winrate.py of tatsu-lab/alpaca_eval, from the
fetched source) on the sample; its hf_hub_download patched to return the local df_gamed.csv."""
import json, sys, types, warnings, logging
warnings.filterwarnings("ignore"); logging.disable(logging.WARNING)
src, data = sys.argv[1], sys.argv[2]
pkg = types.ModuleType("alpaca_eval"); pkg.__path__ = [f"{src}/alpaca_eval"]; sys.modules["alpaca_eval"] = pkg
import pandas as pd
from alpaca_eval.metrics import glm_winrate

glm_winrate.hf_hub_download = lambda filename, **kw: f"{data}/{filename}"
annotations = pd.DataFrame(json.load(open(f"{data}/annotations.json")))
out = {}
for model, part in annotations.groupby("generator_2", sort=True):
    part = part.reset_index(drop=True)            # index = the instruction's place, as in results/<model>/...
    row = {}
    for glm in ("length_controlled_v1", "length_controlled_noreg", "length_controlled_minimal"):
        m = glm_winrate.get_length_controlled_winrate(part.copy(), glm_name=glm, save_weights_dir=None,
                                                      is_warn_extreme_changes=False)
        row[glm] = float(m["length_controlled_winrate"])
        # the same GLM with liblinear run to convergence (tol 1e-10 instead of its default 1e-4)
        info = {**glm_winrate.GLM_INFO[glm], "kwargs": {"n_splits": 5, "tol": 1e-10}}
        tight = glm_winrate.get_length_controlled_winrate(part.copy(), glm_info=info, save_weights_dir=None,
                                                          is_warn_extreme_changes=False)
        row[glm + "_tol1e-10"] = float(tight["length_controlled_winrate"])
    row.update(win_rate=float(m["win_rate"]), standard_error=float(m["standard_error"]),
               discrete_win_rate=float(m["discrete_win_rate"]), n_total=int(m["n_total"]))
    out[model] = row
print(json.dumps(out, indent=1))
